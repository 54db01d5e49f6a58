"""Pieces every recommender graph shares: input validation and the ranking helpers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from pydantic import ValidationError

from bench.environment import Environment, get_environment
from state.base_state import BaseState
from state.blackboard import post
from state.context import Context, context_or_default
from state.contract import InvalidRecInput, RecInput

VALIDATE_NODE = "validate_input"


def describe_validation_error(error: ValidationError) -> str:
    """One line naming each offending field and value."""
    parts = []
    for issue in error.errors():
        field = ".".join(str(p) for p in issue["loc"]) or "input"
        message = issue["msg"].removeprefix("Value error, ")
        parts.append(f"{field}: {message}")
    return "invalid RecInput: " + "; ".join(parts)


def check_request(state: BaseState, config: RunnableConfig) -> dict[str, Any]:
    """First node of every graph: check the request against `RecInput` and the dataset.

    Raises `InvalidRecInput` naming the offending value (unknown user or item id,
    empty or duplicate candidates); otherwise writes the visible history.
    """
    raw = {key: state[key] for key in RecInput.model_fields if state.get(key) is not None}
    try:
        request = RecInput.model_validate(raw)
    except ValidationError as error:
        raise InvalidRecInput(describe_validation_error(error)) from None
    env = get_environment(current_context().dataset)
    env.require_user(request.user_id)
    if request.candidates is not None:
        env.require_items(request.candidates)
    history = env.history(request.user_id, request.scenario)
    note = f"user {request.user_id}: {len(history)} visible history items ({request.scenario})"
    return {
        "user_id": request.user_id,
        "candidates": request.candidates,
        "scenario": request.scenario,
        "history": history,
        "retrieve_mode": request.candidates is None,
        "trace": [post(VALIDATE_NODE, note)],
    }


async def acheck_request(state: BaseState, config: RunnableConfig) -> dict[str, Any]:
    """`check_request` on the event loop: it is quick and pure CPU, and a thread hop per
    user would make the GIL ping-pong between threads under high concurrency."""
    return check_request(state, config)


def unseen_items(env: Environment, history: Sequence[str]) -> list[str]:
    """Catalog items not in the visible history: the pool for retrieve mode."""
    seen = set(history)
    return [item for item in env.item_ids if item not in seen]


def rank_by_scores(items: Sequence[str], scores: np.ndarray) -> list[str]:
    """Items by descending score; ties keep the given order (a stable sort)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [items[i] for i in order]


def profile_vector(env: Environment, items: Sequence[str]) -> np.ndarray | None:
    """Normalised mean MiniLM embedding of `items` (None for no items)."""
    if not items:
        return None
    vectors = env.item_vectors()[[env.item_index[i] for i in items]]
    mean = vectors.mean(axis=0)
    return mean / (np.linalg.norm(mean) or 1.0)


def similarity_order(env: Environment, profile_items: Sequence[str], items: Sequence[str]) -> list[str]:
    """`items` by cosine to the mean of `profile_items`; by popularity when that is empty."""
    profile = profile_vector(env, profile_items)
    if profile is None:
        scores = np.array([env.popularity.get(i, 0) for i in items], dtype=np.float64)
    else:
        scores = env.item_vectors()[[env.item_index[i] for i in items]] @ profile
    return rank_by_scores(items, scores)


def retrieve_candidates(env: Environment, history: Sequence[str], k: int) -> list[str]:
    """Retrieve mode: the `k` catalog items nearest the recent history, excluding the history.

    Uses the Chroma catalog index; users without history get the most popular items.
    """
    seen = set(history)
    profile = profile_vector(env, history[-10:])
    if profile is None:
        return similarity_order(env, [], unseen_items(env, history))[:k]
    found = env.catalog_index().search(profile, min(len(env.item_ids), k + len(seen)))
    return [item for item in found if item not in seen][:k]


def current_context() -> Context:
    """The running graph's `Context` (defaults when the caller passed none)."""
    from langgraph.runtime import get_runtime

    return context_or_default(get_runtime(Context).context)


def dual_node(name: str, sync_fn: Any, async_fn: Any) -> Any:
    """A node with both a sync and an async body, so `invoke` and `ainvoke` both work.

    Both bodies take `(state, config)`; they read the `Context` with `current_context()`.
    """
    # LangGraph's own node wrapper inspects the signatures once, at build time
    # (RunnableLambda does it on every call, ~1 ms per invocation).
    from langgraph._internal._runnable import RunnableCallable

    return RunnableCallable(sync_fn, async_fn, name=name)


validate_input = dual_node(VALIDATE_NODE, check_request, acheck_request)
"""The shared first node of every graph (sync and async bodies)."""
