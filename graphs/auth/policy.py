"""What each role may do (authorization), as plain functions the server's handlers call.

- `service`: every graph, every resource; only the input bounds apply.
- `user` (as user ID): the recommendation graphs' own assistants (graph id = method name) for
  `user_id` ID only; never a service graph (memory writes, pool training: `SERVICE_GRAPHS`); only
  the threads, runs, crons and store items it owns (an `owner` tag added on create and filtered on
  every read, list and search); no assistants of its own. Its run context may name a dataset
  users may use (`RECGRAPH_USER_DATASETS`, else any dataset by name, not by path) and set
  `top_k` and `seed`; every other knob is the deployment's (its defaults: the LLM endpoint, model,
  memory, pool and checkpoint locations, budgets).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from graphs.auth.credentials import Caller
from graphs.auth.limits import InputTooLarge, Limits
from graphs.registry import METHODS, SERVICE_GRAPHS, method_context
from state.contract import RecInput
from world.errors import RecgraphError

OWNER = "owner"
"""Metadata key holding the identity that created a thread, run, cron or store item."""
USER_CONTEXT = ("dataset", "top_k", "seed")
"""Context knobs a user caller may set (others must keep the method's defaults)."""


class Forbidden(RecgraphError):
    """The caller may not do this (403); the message says why, without naming other users' data."""


def user_datasets(environ: Mapping[str, str] | None = None) -> frozenset[str] | None:
    """The datasets `RECGRAPH_USER_DATASETS` lets user callers name (None: any name, no path)."""
    text = (os.environ if environ is None else environ).get("RECGRAPH_USER_DATASETS", "")
    named = frozenset(d.strip() for d in text.split(",") if d.strip())
    return named or None


def dataset_allowed(dataset: object, allowed: frozenset[str] | None) -> bool:
    """A user caller may name `dataset`: one listed, or (no list) a name that is not a path."""
    if not isinstance(dataset, str) or not dataset:
        return False
    if allowed is not None:
        return dataset in allowed
    return not any(mark in dataset for mark in ("/", "\\", "~")) and not dataset.startswith(".")


def check_run(
    caller: Caller,
    graph: str | None,
    kwargs: Mapping[str, Any],
    limits: Limits,
    allowed_datasets: frozenset[str] | None,
) -> None:
    """Refuse a run `caller` may not start (`Forbidden`) or whose input is past `limits`
    (`InputTooLarge`); `graph` is the assistant's graph id (None: not a default assistant)."""
    payload = kwargs.get("input")
    if caller.role == "user":
        check_user_run(caller, graph, payload, kwargs, allowed_datasets)
    limits.check(payload)


def check_user_run(
    caller: Caller,
    graph: str | None,
    payload: Any,
    kwargs: Mapping[str, Any],
    allowed_datasets: frozenset[str] | None,
) -> None:
    """A user caller's run: its own recommendations, the deployment's settings."""
    if graph in SERVICE_GRAPHS:
        raise Forbidden(f"{graph} writes shared memory or trains a pool: it needs the service role")
    if graph not in METHODS:
        raise Forbidden("a user caller may run only the recommendation graphs' own assistants")
    if kwargs.get("command"):
        raise Forbidden("a user caller may not send a command (resume, goto or state update)")
    if not isinstance(payload, dict):
        raise InputTooLarge("input: expected a RecInput object")
    extra = sorted(set(payload) - set(RecInput.model_fields))
    if extra:
        raise InputTooLarge(f"input.{extra[0]}: not a RecInput field")
    requested = payload.get("user_id")
    if requested is None:
        raise InputTooLarge("input.user_id: required")
    if str(requested) != caller.user_id:
        raise Forbidden(f"user {caller.user_id} may rank only for itself, not for another user id")
    check_user_context(graph, kwargs.get("context") or {}, allowed_datasets)


def check_user_context(graph: str, context: Any, allowed_datasets: frozenset[str] | None) -> None:
    """A user caller's run context: `USER_CONTEXT` knobs, every other one at its default."""
    if not isinstance(context, dict):
        raise InputTooLarge("context: expected an object")
    defaults = method_context(graph, None)
    known = {f.name for f in fields(defaults)}
    for key, value in context.items():
        if key not in known:
            raise InputTooLarge(f"context.{key}: not a setting of {graph}")
        if key == "dataset":
            if not dataset_allowed(value, allowed_datasets):
                raise Forbidden("context.dataset: not a dataset user callers may name on this deployment")
        elif key in USER_CONTEXT:
            if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 10_000:
                raise InputTooLarge(f"context.{key}: expected an integer from 0 to 10000")
        elif value != getattr(defaults, key):
            raise Forbidden(f"context.{key}: set by the deployment, not by a user caller")


def store_namespace_allowed(caller: Caller, namespace: Any) -> bool:
    """A user caller's store access stays under its own namespace `(identity, ...)`."""
    if caller.role == "service":
        return True
    return isinstance(namespace, (tuple, list)) and len(namespace) > 0 and namespace[0] == caller.identity


def owner_filter(caller: Caller) -> dict[str, str] | None:
    """The filter every read, list and search of a user caller gets (None: the service sees all)."""
    return {OWNER: caller.identity} if caller.role == "user" else None


def tag_owner(caller: Caller, value: Any) -> None:
    """Stamp the caller's identity on a resource being created or updated (its `metadata`): a user
    always owns what it writes; the service keeps an existing owner (it may act on a user's thread)."""
    if not isinstance(value, dict) or "metadata" not in value:
        return
    metadata = value.get("metadata")
    if metadata is None:
        value["metadata"] = {OWNER: caller.identity}
    elif isinstance(metadata, dict):
        if caller.role == "user":
            metadata[OWNER] = caller.identity
        else:
            metadata.setdefault(OWNER, caller.identity)
