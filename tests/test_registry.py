"""The registry only collects: langgraph.json follows it, each graph shows its own context class,
overrides apply in `runtime.context`, a misspelt hook fails when the registry loads, and a new method
is its rooms plus one name (walked through with a toy)."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from graphs import registry, served
from graphs.method_spec import HookReferenceError, MethodSpec
from graphs.registry import METHODS, get_graph, langgraph_json, method_context
from graphs.run_context import compile_method
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from state.context import Context
from state.memrec.context import MemRecContext

REPO = Path(__file__).resolve().parent.parent

TOY_CONTEXT = '''
"""The toy method's context: the common knobs plus one of its own."""
from dataclasses import dataclass, field

from state.context import Context


@dataclass(kw_only=True)
class ToyContext(Context):
    toy_descending: bool = field(default=False, metadata={"description": "toy: ids descending."})
'''

TOY_GRAPH = '''
"""A toy method: one agent node that ranks candidates by item id, through the shared factory."""
from typing import Any

from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from agents.base import AgentTask
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node
from graphs.run_context import compile_method
from state.base_state import BaseState
from state.contract import RecInput, RecOutput
from state.toy.context import ToyContext


class Order(BaseModel):
    ranking: list[str]


def prepare(state: BaseState, ctx: ToyContext, env: Any) -> AgentCall:
    candidates = list(state["candidates"])
    descending = sorted(candidates, key=int, reverse=ctx.toy_descending)
    task = AgentTask(agent="toy_ranker", role="rec", messages=[], schema=Order,
                     validate=lambda answer: (answer, []), fallback=lambda: Order(ranking=descending))
    return AgentCall(task, lambda result: {"ranking": result.output.ranking,
                                           "usage": [result.usage.as_dict()]})


builder = StateGraph(BaseState, input_schema=RecInput, output_schema=RecOutput, context_schema=ToyContext)
builder.add_node(VALIDATE_NODE, validate_input)
builder.add_node("toy_ranker", agent_node("toy_ranker", prepare))
builder.add_edge(START, VALIDATE_NODE)
builder.add_edge(VALIDATE_NODE, "toy_ranker")
builder.add_edge("toy_ranker", END)
graph = compile_method(builder, "toy")
'''

TOY_HOOKS = """
from graphs.hooks import Prepared, PrepareRequest


def prepare(request: PrepareRequest) -> Prepared:
    (request.work_dir / "toy-trained.txt").write_text(",".join(request.users))
    figures = {"users": len(request.users), "descending": request.context.toy_descending}
    return Prepared(request.context, {"training": figures})
"""

TOY_SPEC = """
from graphs.method_spec import MethodSpec
from state.toy.context import ToyContext

METHODS = {
    "toy": MethodSpec("graphs.toy.graph:graph", "llm", "toy: ids descending", ToyContext,
                      {"toy_descending": True}, prepare="graphs.toy.hooks:prepare"),
}
SERVICE_GRAPHS = {}
"""

METHOD_KNOBS = ("arag_", "memrec_", "amem4rec_", "chainrec_")
"""The method families' knob prefixes."""


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


def test_studio_settings_show_the_common_knobs_and_the_method_s_own_only() -> None:
    common = {f.name for f in fields(Context)}
    arag = set(get_graph("arag").get_context_jsonschema()["properties"])
    assert common <= arag
    assert {name for name in arag - common} == {f.name for f in fields(AragContext)} - common
    assert all(name.startswith("arag_") for name in arag - common)
    for name, spec in METHODS.items():
        shown = set(get_graph(name).get_context_jsonschema()["properties"])
        own = {n for n in shown - common}
        prefixes = {p for p in METHOD_KNOBS if any(n.startswith(p) for n in own)}
        if not name.startswith("router"):  # the router calls every method's agents: it has their knobs
            assert len(prefixes) <= 1, f"{name} shows knobs of {sorted(prefixes)}"
        assert shown == {f.name for f in fields(spec.context)}


def test_every_ablation_override_names_a_field_of_its_method_s_class() -> None:
    for name, spec in METHODS.items():
        known = {f.name for f in fields(spec.context)}
        assert set(spec.overrides) <= known, name
    with pytest.raises(HookReferenceError, match="'memrec_use_read' is not a field of AragContext"):
        MethodSpec("graphs.arag.graph:graph", "llm", "bad", AragContext, {"memrec_use_read": False})


def test_a_misspelt_hook_or_graph_fails_when_the_spec_is_made() -> None:
    with pytest.raises(
        HookReferenceError, match=r"module 'graphs\.memrec\.warmup' defines no 'with_stage_v'"
    ):
        MethodSpec(
            "graphs.memrec.graph:graph",
            "llm",
            "typo",
            MemRecContext,
            prepare="graphs.memrec.warmup:with_stage_v",
        )
    with pytest.raises(HookReferenceError, match=r"no module 'graphs\.memrec\.warmpu'"):
        MethodSpec(
            "graphs.memrec.graph:graph",
            "llm",
            "typo",
            MemRecContext,
            prepare="graphs.memrec.warmpu:with_stage_w",
        )
    with pytest.raises(HookReferenceError, match="not 'module:attribute'"):
        MethodSpec("graphs.memrec.graph.graph", "llm", "typo", MemRecContext)
    with pytest.raises(HookReferenceError, match="cli hook of 'typo' is neither callable"):
        MethodSpec("graphs.memrec.graph:graph", "llm", "typo", MemRecContext, cli=3)  # type: ignore[arg-type]


def test_ablation_overrides_are_in_runtime_context() -> None:
    """A node reading `get_runtime().context` sees the ablation's overrides, whatever the caller passed."""
    seen: list[Any] = []
    graph = get_graph("memrec_no_llm_rules")
    original = graph.run_context
    assert original(None).memrec_rules == "generic"
    assert original(MemRecContext(memrec_rules="books")).memrec_rules == "generic"
    assert original({"memrec_rules": "books", "top_k": 4}).top_k == 4
    assert isinstance(original(Context(seed=3)), MemRecContext) and original(Context(seed=3)).seed == 3
    from langgraph.graph import END, START, StateGraph
    from langgraph.runtime import get_runtime
    from typing_extensions import TypedDict

    class Probe(TypedDict, total=False):
        x: int

    def node(state: Probe) -> Probe:
        seen.append(get_runtime().context)
        return {}

    builder = StateGraph(Probe, context_schema=MemRecContext)
    builder.add_node("probe", node)
    builder.add_edge(START, "probe")
    builder.add_edge("probe", END)
    probe = compile_method(builder, "probe").copy(update={"method_overrides": {"memrec_use_read": False}})
    probe.invoke({"x": 1}, context=MemRecContext(memrec_use_read=True))
    probe.invoke({"x": 1})
    asyncio.run(probe.ainvoke({"x": 1}, context={"memrec_k": 5}))
    assert [c.memrec_use_read for c in seen] == [False, False, False]
    assert seen[2].memrec_k == 5 and all(isinstance(c, MemRecContext) for c in seen)


def test_ablation_overrides_reach_the_nodes() -> None:
    request = {"user_id": "7", "candidates": ["1", "50", "181", "100"]}
    generic = get_graph("memrec_no_llm_rules").invoke(request, context=MemRecContext())
    assert "'generic'" in generic["trace"][1]["content"]
    # the same compiled graph under its own name follows the caller's Context
    full = get_graph("memrec").invoke(request, context=MemRecContext())
    assert "'movietv'" in full["trace"][1]["content"]
    assert method_context("memrec_no_read", Context()).memrec_use_read is False
    assert method_context("popularity", Context()) == BaselinesContext()


def test_a_toy_method_is_its_rooms_plus_one_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A method in rooms outside the checkout (`state/toy/`, `graphs/toy/`) plus its name in
    `METHOD_PACKAGES` runs through `recgraph bench`, its hooks and its override included."""
    import graphs
    import state
    from recgraph.cli import main

    for layer, files in {
        "state": {"context.py": TOY_CONTEXT},
        "graphs": {"graph.py": TOY_GRAPH, "hooks.py": TOY_HOOKS, "spec.py": TOY_SPEC},
    }.items():
        room = tmp_path / layer / "toy"
        room.mkdir(parents=True)
        (room / "__init__.py").write_text("")
        for name, text in files.items():
            (room / name).write_text(text)
    monkeypatch.setattr(state, "__path__", [*state.__path__, str(tmp_path / "state")])
    monkeypatch.setattr(graphs, "__path__", [*graphs.__path__, str(tmp_path / "graphs")])
    methods, _ = registry.collect((*registry.METHOD_PACKAGES, "toy"))
    assert list(methods)[:-1] == list(METHODS)  # the toy is only added
    monkeypatch.setitem(METHODS, "toy", methods["toy"])
    get_graph.cache_clear()
    try:
        out = tmp_path / "run"
        code = main(["bench", "--methods", "toy,popularity", "--users", "5", "--out", str(out)])
        assert code == 0
        metrics = json.loads((out / "metrics.json").read_text())["methods"]
        assert metrics["toy"]["users"] == 5 and metrics["toy"]["training"] == {"users": 5, "descending": True}
        records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()[1:]]
        toy = [r for r in records if r["method"] == "toy"]
        # the override (toy_descending) reached the node: every ranking is ids descending
        assert all(r["ranking"] == sorted(r["ranking"], key=int, reverse=True) for r in toy)
        assert (out / "toy-trained.txt").read_text().count(",") == 4
        served_toy = get_graph("toy")
        assert {"validate_input", "toy_ranker"} <= set(served_toy.get_graph().nodes)
        assert served_toy.name == "toy"
        assert "toy_descending" in served_toy.get_context_jsonschema()["properties"]
    finally:
        get_graph.cache_clear()
        for module in [m for m in sys.modules if m.startswith(("graphs.toy", "state.toy"))]:
            sys.modules.pop(module)
