"""The one way to turn work into a graph node: `step_node` for plain steps, `agent_node` for agents.

Every node has a sync body (for `invoke`) and an async one (for `ainvoke`, Studio and the
benchmark). A plain step is written once, synchronously: its async body runs it on the event loop
when it is quick CPU work, or in a worker thread when it may block (files, SQLite, model loads),
so `langgraph dev` never sees blocking calls on its loop. An agent node prepares an `AgentTask`
from the state, asks the agent (sync or async LLM call) and turns the result into a state update.

Under `ainvoke` a node's first call for a given Context runs its sync body in a worker thread:
that call builds the process-wide caches the node needs (the dataset's MiniLM item vectors,
indexes, trained models, the embedding model), which read and write files; later calls find them
in memory and run on the loop. Work that touches disk on every call declares `blocking`.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config
from langgraph.graph import END, START, StateGraph

from agents.backends import model_label
from agents.base import AgentResult, AgentTask, arun_agent, run_agent, superstep
from agents.ranking import with_ranking_origin
from agents.usage import AgentUsage
from graphs.run_context import context_key, current_context
from state.context import Context, backend_for
from world.environment import Environment, environment_loaded, get_environment

StepBody = Callable[[Any, RunnableConfig], dict[str, Any]]
"""A node body: (state, config) -> state update. It reads the run's Context with `current_context()`."""
AsyncStepBody = Callable[[Any, RunnableConfig], Awaitable[dict[str, Any]]]


class DualNode(Runnable[Any, dict[str, Any]]):
    """A node with a sync and an async body; LangGraph calls whichever the run needs.

    It calls the body directly (no nested run per call): LangGraph already traces the node under
    its name, and it has set the run's config (and so `get_runtime()`) before calling it.
    """

    def __init__(
        self, name: str, body: StepBody, abody: AsyncStepBody, *, warm_first_call: bool = True
    ) -> None:
        """`body` and `abody` take (state, config) and return the state update. With
        `warm_first_call` False, `ainvoke` always awaits `abody` (see `step_node`)."""
        self.name = name
        self.body = body
        self.abody = abody
        self.warm_first_call = warm_first_call
        self._warm: set[str] = set()
        self._warm_lock = threading.Lock()
        self._warming: dict[str, asyncio.Future[None]] = {}

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> dict[str, Any]:
        """Run the sync body."""
        return self.body(input, ensure_config(config))

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the async body; the node's first call for this run's Context runs the sync body in a
        worker thread instead (it may build caches on disk; see the module docstring). Calls made
        on the same loop while that first call runs wait for it, then take the async body: a wave
        of concurrent first users would otherwise each hold an executor thread for a whole
        synchronous LLM call (6 threads on 2 cores: a wave of 16 took three LLM rounds)."""
        config = ensure_config(config)
        if not self.warm_first_call:
            return await self.abody(input, config)
        key = context_key(current_context())
        while key not in self._warm:
            first = self._warming.get(key)
            if first is None or first.get_loop() is not asyncio.get_running_loop():
                return await self._first_call(key, input, config)
            await asyncio.shield(first)  # if that call fails, the next waiter makes the first call
        return await self.abody(input, config)

    async def _first_call(self, key: str, input: Any, config: RunnableConfig) -> dict[str, Any]:
        done = asyncio.get_running_loop().create_future()
        self._warming[key] = done
        try:
            update = await asyncio.to_thread(self.body, input, config)
            with self._warm_lock:
                self._warm.add(key)
            return update
        finally:
            if self._warming.get(key) is done:
                del self._warming[key]
            done.set_result(None)


def item_vectors_pending(state: Any) -> bool:
    """True when a node could embed item vectors on this state: an item of its history or candidates
    has no MiniLM vector on disk yet, or the dataset or its vectors are not open in this process yet.
    Embedding writes the cache files (`world.item_vectors`), which `langgraph dev` refuses on its
    event loop, so such a call runs off the loop; once the rows are on disk it runs on the loop."""
    dataset = current_context().dataset
    if not environment_loaded(dataset):
        return True
    env = get_environment(dataset)
    vectors = env.peek("item_vectors")
    if vectors is None:
        return True
    if not isinstance(state, dict):
        return False
    return not vectors.ready(env.item_rows([*(state.get("history") or ()), *(state.get("candidates") or ())]))


def _off_loop(state: Any, declared: bool | Callable[[Any], bool], item_vectors: bool) -> bool:
    """Whether a node's (preparation) step runs in a worker thread under `ainvoke`."""
    if declared(state) if callable(declared) else declared:
        return True
    return item_vectors and item_vectors_pending(state)


def step_node(
    name: str,
    body: StepBody,
    *,
    blocking: bool | Callable[[Any], bool] = False,
    item_vectors: bool = True,
    warm_first_call: bool = True,
) -> DualNode:
    """A node from one sync body. When `blocking` (or `blocking(state)`) is true, under `ainvoke`
    it runs in a worker thread (file or database I/O, model loading); otherwise inline on the loop
    (quick, pure CPU: a thread hop per user would make the GIL ping-pong under high concurrency).
    Unless `item_vectors` is False (the node never reads them) it also runs in a thread while
    `item_vectors_pending(state)`.

    `warm_first_call=False` skips the synchronous first call per Context (module docstring). It is
    for nodes whose async path already does every blocking step in a worker thread (MemRec's: SQLite,
    its feature index, MiniLM): for them the first call gains nothing, and for an agent node it would
    hold an executor thread through a whole LLM round per concurrent first user (6 threads on 2
    cores: a bench wave of 16 users took three LLM rounds instead of one)."""

    async def abody(state: Any, config: RunnableConfig) -> dict[str, Any]:
        if _off_loop(state, blocking, item_vectors):
            return await asyncio.to_thread(body, state, config)
        return body(state, config)

    return DualNode(name, body, abody, warm_first_call=warm_first_call)


@dataclass
class AgentCall:
    """One agent invocation a node prepared: the task, how to write its result back, and whether
    to ask at all."""

    task: AgentTask
    """The agent task (prompt, schema, validation, fallback)."""
    finish: Callable[[AgentResult], dict[str, Any]]
    """Turns the agent's result into the node's state update."""
    needed: bool = True
    """False when the answer is fixed without asking (e.g. nothing to summarise): no call is made."""
    context: Context | None = None
    """The context to ask with when it differs from the run's (e.g. a role forced to heuristic)."""


PrepareAgent = Callable[[Any, Context, Environment], AgentCall]
"""Builds an `AgentCall` from (state, the run's Context, the dataset's Environment)."""


def skipped(call: AgentCall, ctx: Context, config: RunnableConfig) -> AgentResult:
    """The deterministic answer of an agent that had nothing to ask (no call is made)."""
    label = model_label(backend_for(ctx, call.task.role))
    return AgentResult(call.task.fallback(), AgentUsage(call.task.agent, label, superstep(config)))


def finished(call: AgentCall, result: AgentResult) -> dict[str, Any]:
    """The node's state update: `call.finish(result)`, and for an agent that ranks the candidates, how
    much of the ranking its model decided (`agents.ranking.with_ranking_origin`)."""
    return with_ranking_origin(call.finish(result), result.usage.model_ids, result.usage.agent)


@dataclass(frozen=True)
class FirstStep:
    """Work an agent node does before preparing its call, when `needed(state)`; its update is merged
    into the node's (`trace` entries first). ChainRec's planner uses it for the episode's first visit
    (load the tools' corpus, retrieve candidates in retrieve mode): the planner is the loop's entry,
    so a separate node would add a step to every episode and to Studio's drawing."""

    needed: Callable[[Any], bool]
    """True when the step must run on this state (e.g. no `domain` yet: the first visit)."""
    run: Callable[[Any], dict[str, Any]]
    """(state) -> state update; reads the run's context with `current_context()`."""
    blocks: Callable[[Any], bool]
    """True when `run` may touch disk on this state: under `ainvoke` it then runs in a worker thread."""


def _merged(first: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    merged = {**first, **update}
    if "trace" in first:
        merged["trace"] = [*first["trace"], *update.get("trace", [])]
    return merged


def agent_node(
    name: str,
    prepare: PrepareAgent,
    *,
    blocking_prepare: bool | Callable[[Any], bool] = False,
    item_vectors: bool = True,
    warm_first_call: bool = True,
    first_step: FirstStep | None = None,
) -> DualNode:
    """A graph node running one agent. `prepare` builds the call; under `ainvoke` the LLM call is
    awaited, and `prepare` runs in a worker thread when `blocking_prepare` (or
    `blocking_prepare(state)`) is true (it touches disk), or, unless `item_vectors` is False,
    while `item_vectors_pending(state)`. `warm_first_call` is `step_node`'s; `first_step` runs
    before `prepare` when it is needed (see `FirstStep`)."""

    def body(state: Any, config: RunnableConfig) -> dict[str, Any]:
        ctx = current_context()
        call = prepare(state, ctx, get_environment(ctx.dataset))
        ask = call.context or ctx
        result = run_agent(call.task, ask, config) if call.needed else skipped(call, ask, config)
        return finished(call, result)

    async def abody(state: Any, config: RunnableConfig) -> dict[str, Any]:
        ctx = current_context()
        if _off_loop(state, blocking_prepare, item_vectors):
            call = await asyncio.to_thread(prepare, state, ctx, get_environment(ctx.dataset))
        else:
            call = prepare(state, ctx, get_environment(ctx.dataset))
        ask = call.context or ctx
        if call.needed:
            return finished(call, await arun_agent(call.task, ask, config))
        return finished(call, skipped(call, ask, config))

    if first_step is None:
        return DualNode(name, body, abody, warm_first_call=warm_first_call)

    def body_after_first(state: Any, config: RunnableConfig) -> dict[str, Any]:
        first = first_step.run(state) if first_step.needed(state) else {}
        return _merged(first, body({**state, **first}, config))

    async def abody_after_first(state: Any, config: RunnableConfig) -> dict[str, Any]:
        first: dict[str, Any] = {}
        if first_step.needed(state):
            blocks = first_step.blocks(state)
            first = await asyncio.to_thread(first_step.run, state) if blocks else first_step.run(state)
        return _merged(first, await abody({**state, **first}, config))

    return DualNode(name, body_after_first, abody_after_first, warm_first_call=warm_first_call)


def one_step_graph(
    name: str, body: StepBody, state: type, input_schema: type, output_schema: type, context_schema: type
) -> StateGraph:
    """The uncompiled `START -> name -> END` graph of a service step whose one node runs `body` off
    the event loop (file or database writes): the commit graphs of training on a deployment."""
    builder = StateGraph(
        state, input_schema=input_schema, output_schema=output_schema, context_schema=context_schema
    )
    builder.add_node(name, step_node(name, body, blocking=True))
    builder.add_edge(START, name)
    builder.add_edge(name, END)
    return builder
