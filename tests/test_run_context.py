"""The run's Context as nodes and routes see it: overrides applied, the copy reused while the
caller's Context is unchanged, and routing functions called on the event loop with the config."""

import asyncio
import threading
from dataclasses import asdict
from typing import Any, Literal

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from agents.usage import AgentUsage
from graphs.run_context import compile_method, context_key, current_context
from graphs.tracing import quiet_routes
from state.context import Context


class S(TypedDict, total=False):
    seen: list[Any]


def test_overridden_context_is_made_once_and_follows_changes_of_the_callers() -> None:
    seen: list[Context] = []

    def node(state: S) -> dict:
        seen.extend([current_context(), current_context()])
        return {}

    builder = StateGraph(S, context_schema=Context)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    plain = compile_method(builder, "probe")
    graph = plain.copy(update={"method_overrides": {"llm_retries": 7}})
    base = Context(dataset="ml-100k", top_k=5)
    graph.invoke({}, context=base)
    graph.invoke({}, context=base)
    assert all(c.llm_retries == 7 and c.top_k == 5 for c in seen)
    assert all(c is seen[0] for c in seen) and base.llm_retries != 7
    base.top_k = 9  # a caller changing its Context (as `recgraph` commands do) gets a new copy
    graph.invoke({}, context=base)
    assert seen[-1] is not seen[0] and seen[-1].top_k == 9 and seen[-1].llm_retries == 7
    plain.copy(update={"method_overrides": {"llm_retries": 3}}).invoke({}, context=base)
    assert seen[-1].llm_retries == 3 and seen[-1].top_k == 9
    plain.invoke({}, context=base)  # no overrides: the caller's own object
    assert seen[-1] is base
    plain.invoke({})  # no context: the schema's defaults, never None
    assert seen[-1] == Context()


def test_context_key_is_the_repr_and_changes_with_a_field() -> None:
    ctx = Context(dataset="ml-100k")
    assert context_key(ctx) == repr(ctx) == context_key(ctx)
    ctx.top_k = 3
    assert context_key(ctx) == repr(ctx) and "top_k=3" in context_key(ctx)


def test_quiet_route_runs_on_the_event_loop_with_the_runs_context() -> None:
    threads: list[int] = []

    def route(state: S) -> Literal["a", "b"]:
        threads.append(threading.get_ident())
        return "a" if current_context().top_k == 1 else "b"

    builder = StateGraph(S, context_schema=Context)
    builder.add_node("start", lambda state: {})
    builder.add_node("a", lambda state: {"seen": ["a"]})
    builder.add_node("b", lambda state: {"seen": ["b"]})
    builder.add_edge(START, "start")
    builder.add_conditional_edges("start", route, ["a", "b"])
    builder.add_edge("a", END)
    builder.add_edge("b", END)
    graph = quiet_routes(builder.compile())

    async def run(top_k: int) -> tuple[S, int]:
        out = await graph.ainvoke({}, context=Context(dataset="ml-100k", top_k=top_k))
        return out, threading.get_ident()

    for top_k, branch in ((1, "a"), (2, "b")):
        out, loop_thread = asyncio.run(run(top_k))
        assert out["seen"] == [branch] and threads[-1] == loop_thread
    assert graph.invoke({}, context=Context(dataset="ml-100k", top_k=1))["seen"] == ["a"]


def test_usage_record_is_what_asdict_gives_and_shares_no_container() -> None:
    usage = AgentUsage("ranker", "sim", 2)
    usage.record_call(0.0, None, "a prompt")
    usage.record_failed_call(0.0, "timeout")
    usage.record_repairs(["unknown_id", "missing_id"])
    record = usage.as_dict()
    assert record == {**asdict(usage), "fallback": False}
    assert list(record) == [*asdict(usage), "fallback"]
    record["errors"]["x"] = 1
    record["intervals"].append((1.0, 2.0))
    assert usage.errors == {"timeout": 1} and len(usage.intervals) == 2
