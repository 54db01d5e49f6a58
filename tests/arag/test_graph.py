"""ARAG's topology: every route reaches the ranker, the graph shapes, UUA and NLI (batched or per item)
in one superstep, and the context switches' routes."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest

from graphs.arag.graph import arag_no_nli_csa_graph, arag_no_nli_graph, graph
from state.arag.context import AragContext
from tests.arag.scripted import CANDIDATES, REQUEST, roles

PARALLEL = {"user_understanding", "nli", "nli_item"}


def task_steps(compiled: Any, request: dict, context: AragContext) -> dict[str, list[int]]:
    """Node name -> the supersteps its tasks ran in."""
    steps: dict[str, list[int]] = defaultdict(list)
    for event in compiled.stream(request, context=context, stream_mode="debug"):
        if event["type"] == "task":
            steps[event["payload"]["name"]].append(event["step"])
    return steps


def paths_to_end(compiled: Any) -> list[list[str]]:
    """Every START -> END path of the drawn graph (it is acyclic)."""
    drawn = compiled.get_graph()
    nexts: dict[str, list[str]] = defaultdict(list)
    for edge in drawn.edges:
        nexts[edge.source].append(edge.target)
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        if path[-1] == "__end__":
            found.append(path)
        for target in nexts[path[-1]]:
            walk([*path, target])

    walk(["__start__"])
    return found


@pytest.mark.parametrize("compiled", [graph, arag_no_nli_graph, arag_no_nli_csa_graph])
def test_every_route_reaches_the_ranker(compiled: Any) -> None:
    paths = paths_to_end(compiled)
    assert paths and all(path[-2] == "item_ranker" for path in paths)
    assert all(path[1:3] == ["validate_input", "recall"] for path in paths)
    drawn = compiled.get_graph()
    assert {e.source for e in drawn.edges if e.target == "__end__"} == {"item_ranker"}


def test_graph_shapes() -> None:
    assert set(graph.get_graph().nodes) >= {"user_understanding", "nli", "nli_item", "context_summary"}
    assert "nli" not in arag_no_nli_graph.get_graph().nodes
    assert "context_summary" in arag_no_nli_graph.get_graph().nodes
    assert not {"nli", "nli_item", "context_summary"} & set(arag_no_nli_csa_graph.get_graph().nodes)
    fan_out = {e.target for e in graph.get_graph().edges if e.source == "recall"}
    assert fan_out == {"user_understanding", "nli", "nli_item"}


def test_uua_and_batched_nli_share_one_superstep() -> None:
    steps = task_steps(graph, REQUEST, AragContext(llm="heuristic"))
    assert len(steps["user_understanding"]) == len(steps["nli"]) == 1
    parallel = steps["user_understanding"][0]
    assert steps["nli"] == [parallel] and steps["recall"] == [parallel - 1]
    assert steps["context_summary"] == [parallel + 1] and steps["item_ranker"] == [parallel + 2]
    assert "nli_item" not in steps


def test_per_item_nli_fans_out_in_the_same_superstep() -> None:
    steps = task_steps(graph, REQUEST, AragContext(llm="heuristic", arag_nli_mode="per_item"))
    assert len(steps["nli_item"]) == len(CANDIDATES)
    assert set(steps["nli_item"]) == set(steps["user_understanding"])
    assert steps["context_summary"] == [steps["user_understanding"][0] + 1]  # runs once, after all
    assert "nli" not in steps


@pytest.mark.parametrize(("use_nli", "use_csa"), [(True, True), (True, False), (False, True), (False, False)])
def test_context_switches_route_through_the_ranker(use_nli: bool, use_csa: bool) -> None:
    output = graph.invoke(
        REQUEST, context=AragContext(llm="heuristic", arag_use_nli=use_nli, arag_use_csa=use_csa)
    )
    got = roles(output)
    assert got[:2] == ["validate_input", "recall"] and got[-1] == "item_ranker"
    assert ("nli" in got) == use_nli and ("context_summary" in got) == use_csa
    assert sorted(output["ranking"]) == sorted(CANDIDATES)
    reference = graph if use_nli else arag_no_nli_graph
    assert output["ranking"] == reference.invoke(REQUEST, context=AragContext(llm="heuristic"))["ranking"]
