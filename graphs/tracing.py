"""How graph runs look in LangSmith: one root run per invocation, named after the method, with
tags and metadata a reviewer filters on; routing functions left out of the tree.

- `run_config` / `protocol_run_config`: the invoke config of one recommendation (or one Stage W
  / training invocation): run name, tags `method:<m>`, `dataset:<d>`, `backend:<b>`,
  `scenario:<s>` (plus `phase:<p>` outside ranking), metadata (user id, seed, number of
  candidates, protocol id, ...) and optionally a fixed run id (so feedback can be attached later).
- `protocol_id`: the id of what fixes a user's case (dataset, N, seed, scenario), equal in
  `recgraph bench` and `recgraph recommend --candidates N`.
- `quiet_routes`: LangGraph traces every conditional-edge function as a run under its node
  (`route_after_recall`, ...); a reviewer wants agents and LLM calls, so registered graphs call
  them untraced (`graphs.registry` applies it to every method and service graph).
- `untraced`: a batch driver (`abatch_as_completed`) that opens no run of its own, so every graph
  invocation it makes is a root run instead of a child of a "bench:<method>" wrapper.

Tracing itself (on/off, endpoint, project) is LangChain's: `LANGSMITH_TRACING` and friends, or
`langsmith.run_helpers.tracing_context` (what `recgraph bench --trace` uses, see bench/run/tracing.py).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, set_config_context
from langgraph.graph.state import CompiledStateGraph

In = TypeVar("In")
Out = TypeVar("Out")

TAG_FIELDS = ("method", "dataset", "backend", "scenario")
"""Every recommendation's root run is tagged `<field>:<value>` for these."""


def dataset_label(dataset: str) -> str:
    """A dataset as a tag shows it: a builtin name as is, a path by its folder or file name."""
    return Path(dataset).name or dataset


def protocol_id(dataset: str, candidates: int | None, seed: int, scenario: str) -> str:
    """A short stable id of what fixes one user's case: the same user under the same id has the
    same candidates and target (`--users` and the backend do not change a case)."""
    key = json.dumps([dataset, candidates, seed, scenario])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def run_config(
    method: str,
    user_id: str,
    *,
    dataset: str,
    backend: str,
    scenario: str,
    seed: int,
    candidates: int | None,
    run_id: UUID | None = None,
    name: str | None = None,
    phase: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> RunnableConfig:
    """The invoke config giving a run its name (the method unless `name`), tags and metadata.

    `candidates` is N (None in retrieve mode: the whole catalog); `phase` marks runs that are not a
    ranking (e.g. "stage_w", "training"); `extra` adds metadata (e.g. a training window's key).
    """
    values = {"method": method, "dataset": dataset_label(dataset), "backend": backend, "scenario": scenario}
    tags = [f"{key}:{values[key]}" for key in TAG_FIELDS]
    metadata: dict[str, Any] = {
        **values,
        "dataset_path": dataset,
        "user_id": user_id,
        "seed": seed,
        "candidates": candidates,
        "protocol_id": protocol_id(dataset, candidates, seed, scenario),
    }
    if phase:
        tags.append(f"phase:{phase}")
        metadata["phase"] = phase
    metadata.update(extra or {})
    config: RunnableConfig = {"run_name": name or method, "tags": tags, "metadata": metadata}
    if run_id is not None:
        config["run_id"] = run_id
    return config


def findable(config: RunnableConfig | None, request: Any, context: Any) -> RunnableConfig:
    """`config` completed with what a reviewer filters on, taken from the run itself: tags
    `dataset:`, `backend:`, `scenario:` and metadata `user_id`, `dataset`, `backend`, `scenario`,
    `seed` and `candidates` (N), so runs started from Studio or a bare `graph.invoke()` are found by
    the same filters as `recgraph bench` / `recommend` runs (`method:` comes from the registry).
    What the caller set wins, except an empty value (the Agent Server sends an empty `user_id`).
    `protocol_id` is only known to callers whose candidates come from the protocol."""
    request = request if isinstance(request, Mapping) else {}
    candidates = request.get("candidates")
    values = {
        "dataset": dataset_label(context.dataset),
        "backend": context.llm,
        "scenario": request.get("scenario") or "classic",
    }
    found: dict[str, Any] = dict(config or {})
    tags = list(found.get("tags") or [])
    present = {tag.partition(":")[0] for tag in tags}
    tags += [f"{key}:{value}" for key, value in values.items() if key not in present]
    metadata = dict(found.get("metadata") or {})
    derived = {
        **values,
        "dataset_path": context.dataset,
        "user_id": str(request.get("user_id") or ""),
        "seed": context.seed,
        "candidates": len(candidates) if candidates else None,
    }
    for key, value in derived.items():
        if metadata.get(key) in (None, ""):
            metadata[key] = value
    found["tags"], found["metadata"] = tags, metadata
    return found


def protocol_run_config(
    protocol: Mapping[str, Any], method: str, user_id: str, **options: Any
) -> RunnableConfig:
    """`run_config` from a bench protocol (`Protocol.as_dict()`: dataset, candidates, seed,
    scenario, llm), as lifecycle hooks receive it."""
    return run_config(
        method,
        user_id,
        dataset=str(protocol["dataset"]),
        backend=str(protocol.get("llm", "heuristic")),
        scenario=str(protocol.get("scenario", "classic")),
        seed=int(protocol.get("seed", 0)),
        candidates=protocol.get("candidates"),
        **options,
    )


def quiet_routes(graph: CompiledStateGraph) -> CompiledStateGraph:
    """Stop `graph`'s conditional-edge functions from being traced as runs; they still route, and
    Studio still draws their edges. Applies to every compiled copy of the same builder (the
    module's graph and the registry's); calling it again changes nothing.

    LangGraph wraps each routing function in a traced runnable when the edge is added, and only
    that tracing gives the function its run's config (which `current_context()` reads): branches
    run outside their node's config context. So each sync routing function is called here with
    the config set explicitly instead. Under `ainvoke` it runs on the event loop, not in a worker
    thread as LangGraph runs sync functions: routes only read the state and the Context, and a
    thread hop per route and user makes the GIL change hands under high concurrency.
    """
    for branches in graph.builder.branches.values():
        for spec in branches.values():
            route = getattr(spec.path, "func", None)
            if route is not None and not getattr(spec.path, QUIET, False):
                _quiet(spec.path, route)
    return graph


QUIET = "_recgraph_quiet"
"""Attribute marking a routing runnable `quiet_routes` already changed."""


def _quiet(path: Runnable, route: Callable[[Any], Any]) -> None:
    def invoke(input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        with set_config_context(ensure_config(config)) as context:
            return context.run(route, input)

    async def ainvoke(input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        return invoke(input, config)

    # Instance attributes shadow the class's methods for the branch's `path.invoke(...)` calls.
    path.invoke = invoke  # type: ignore[method-assign]
    path.ainvoke = ainvoke  # type: ignore[method-assign]
    setattr(path, QUIET, True)


class Untraced(Runnable[In, Out]):
    """An async function as a Runnable that opens no run: batching it (`abatch`,
    `abatch_as_completed` with `max_concurrency`) leaves each graph invocation inside a root run."""

    def __init__(self, afunc: Callable[[In], Awaitable[Out]], name: str) -> None:
        """`afunc` maps one input to its output."""
        self.afunc = afunc
        self.name = name

    def invoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Run `afunc` to completion on a new event loop (the batch drivers use `ainvoke`)."""
        import asyncio

        return asyncio.run(self.afunc(input))  # type: ignore[arg-type]

    async def ainvoke(self, input: In, config: RunnableConfig | None = None, **kwargs: Any) -> Out:
        """Await `afunc` (no callback run is started)."""
        return await self.afunc(input)


def untraced(afunc: Callable[[In], Awaitable[Out]], name: str) -> Untraced[In, Out]:
    """`Untraced(afunc, name)`: a drop-in for `RunnableLambda(afunc, name=name)` in batch drivers."""
    return Untraced(afunc, name)
