"""The registry is the one extension point: langgraph.json follows it, overrides apply wherever a
method runs, and a new method is its own files plus one entry (walked through with a toy)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from graphs import registry, served
from graphs.registry import METHODS, MethodSpec, get_graph, langgraph_json, method_context
from state.context import Context

REPO = Path(__file__).resolve().parent.parent

TOY_GRAPH = '''
"""A toy method: one agent node that ranks candidates by item id, through the shared factory."""
from typing import Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from agents.base import AgentTask
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node
from state.base_state import BaseState
from state.context import Context
from state.contract import RecInput, RecOutput


class Order(BaseModel):
    ranking: list[str]


def prepare(state: BaseState, ctx: Context, env: Any) -> AgentCall:
    candidates = list(state["candidates"])
    descending = sorted(candidates, key=int, reverse=ctx.top_k == 3)
    task = AgentTask(agent="toy_ranker", role="rec", messages=[], schema=Order,
                     validate=lambda answer: (answer, []), fallback=lambda: Order(ranking=descending))
    return AgentCall(task, lambda result: {"ranking": result.output.ranking,
                                           "usage": [result.usage.as_dict()]})


builder = StateGraph(BaseState, input_schema=RecInput, output_schema=RecOutput, context_schema=Context)
builder.add_node(VALIDATE_NODE, validate_input)
builder.add_node("toy_ranker", agent_node("toy_ranker", prepare))
builder.add_edge(START, VALIDATE_NODE)
builder.add_edge(VALIDATE_NODE, "toy_ranker")
builder.add_edge("toy_ranker", END)
graph = builder.compile(name="toy")
'''

TOY_HOOKS = '''
from graphs.lifecycle.hooks import Prepared, PrepareRequest


def prepare(request: PrepareRequest) -> Prepared:
    (request.work_dir / "toy-trained.txt").write_text(",".join(request.users))
    figures = {"users": len(request.users), "top_k": request.context.top_k}
    return Prepared(request.context, {"training": figures})
'''


def test_langgraph_json_is_generated_from_the_registry() -> None:
    assert (REPO / "langgraph.json").read_text() == langgraph_json(), (
        "langgraph.json differs from the registry: run `python -m graphs.registry > langgraph.json`"
    )
    listed = json.loads(langgraph_json())["graphs"]
    assert set(listed) == set(METHODS) | set(registry.SERVICE_GRAPHS)


def test_every_served_graph_is_the_registered_one_with_its_name() -> None:
    for name in METHODS:
        assert getattr(served, name) is get_graph(name)
        assert get_graph(name).name == name
    assert set(served.served()) == set(METHODS) | set(registry.SERVICE_GRAPHS)


def test_ablation_overrides_reach_the_nodes() -> None:
    request = {"user_id": "7", "candidates": ["1", "50", "181", "100"]}
    generic = get_graph("memrec_no_llm_rules").invoke(request, context=Context())
    assert "'generic'" in generic["trace"][1]["content"]
    # the same compiled graph under its own name follows the caller's Context
    full = get_graph("memrec").invoke(request, context=Context())
    assert "'movietv'" in full["trace"][1]["content"]
    assert method_context("memrec_no_read", Context()).memrec_use_read is False
    assert method_context("popularity", Context()) == Context()


def test_a_toy_method_is_its_files_plus_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from recgraph.cli import main

    package = tmp_path / "toy_method"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "graph.py").write_text(TOY_GRAPH)
    (package / "hooks.py").write_text(TOY_HOOKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(
        METHODS,
        "toy",
        MethodSpec("toy_method.graph:graph", "llm", "toy: ids descending", {"top_k": 3},
                   prepare="toy_method.hooks:prepare"),
    )
    get_graph.cache_clear()
    try:
        out = tmp_path / "run"
        code = main(["bench", "--methods", "toy,popularity", "--users", "5", "--out", str(out)])
        assert code == 0
        metrics = json.loads((out / "metrics.json").read_text())["methods"]
        assert metrics["toy"]["users"] == 5 and metrics["toy"]["training"] == {"users": 5, "top_k": 3}
        records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()[1:]]
        toy = [r for r in records if r["method"] == "toy"]
        # the override (top_k=3) reached the node: every ranking is ids descending
        assert all(r["ranking"] == sorted(r["ranking"], key=int, reverse=True) for r in toy)
        assert (out / "toy-trained.txt").read_text().count(",") == 4
        toy = served.served()["toy"]
        assert {"validate_input", "toy_ranker"} <= set(toy.get_graph().nodes)
        assert toy.name == "toy"
    finally:
        get_graph.cache_clear()
        sys.modules.pop("toy_method.graph", None)
