"""A node's first call per Context runs its sync body in a worker thread; concurrent first callers
wait for it and then take the async body (one thread, not one per user of the first wave)."""

import asyncio
import threading
import time
from typing import Any

from langgraph.graph import END, START, StateGraph
from typing_extensions import TypedDict

from graphs.nodes import DualNode
from state.context import Context


class S(TypedDict, total=False):
    user: int
    path: str


def counting_graph(fail_first: bool = False) -> tuple[Any, dict[str, list[Any]]]:
    calls: dict[str, list[Any]] = {"sync": [], "async": []}

    def body(state: S, config: Any) -> dict:
        calls["sync"].append(threading.get_ident())
        time.sleep(0.2)  # a first call that builds caches on disk
        if fail_first and len(calls["sync"]) == 1:
            raise OSError("cache not writable")
        return {"path": "sync"}

    async def abody(state: S, config: Any) -> dict:
        calls["async"].append(state["user"])
        return {"path": "async"}

    builder = StateGraph(S, context_schema=Context)
    builder.add_node("node", DualNode("node", body, abody))
    builder.add_edge(START, "node")
    builder.add_edge("node", END)
    return builder.compile(), calls


async def wave(graph: Any, ctx: Context, users: int) -> list[Any]:
    runs = (graph.ainvoke({"user": u}, context=ctx) for u in range(users))
    return await asyncio.gather(*runs, return_exceptions=True)


def test_a_wave_of_first_users_runs_the_sync_body_once() -> None:
    graph, calls = counting_graph()
    ctx = Context(dataset="ml-100k")
    outputs = asyncio.run(wave(graph, ctx, 6))
    assert sorted(o["path"] for o in outputs) == ["async"] * 5 + ["sync"]
    assert len(calls["sync"]) == 1 and calls["sync"][0] != threading.get_ident()
    assert sorted(calls["async"]) == sorted(o["user"] for o in outputs if o["path"] == "async")
    outputs = asyncio.run(wave(graph, ctx, 3))  # warm for this Context: async only, on a new loop too
    assert [o["path"] for o in outputs] == ["async"] * 3 and len(calls["sync"]) == 1
    asyncio.run(wave(graph, Context(dataset="ml-100k", top_k=3), 2))  # another Context: its own first call
    assert len(calls["sync"]) == 2


def test_a_failed_first_call_is_made_again_by_a_waiting_user() -> None:
    graph, calls = counting_graph(fail_first=True)
    outputs = asyncio.run(wave(graph, Context(dataset="ml-100k"), 4))
    errors = [o for o in outputs if isinstance(o, Exception)]
    assert len(errors) == 1 and "cache not writable" in str(errors[0])
    assert len(calls["sync"]) == 2  # the failure was not taken as warm: the next user ran it again
    assert sorted(o["path"] for o in outputs if isinstance(o, dict)) == ["async", "async", "sync"]
