"""The router graph end to end: its nodes and the planner's conditional edge (what Studio draws), a
heuristic episode on ml-100k and on the shared Amazon CDs sample, unavailable method tools masked
with their reason, `router_no_method_tools` ranking as `chainrec`, and an LLM planner whose garbage
answer falls back to the router's rule planner."""

from __future__ import annotations

import asyncio
import json
from itertools import groupby
from pathlib import Path

from agents.router.catalog import ROUTER_TOOLS
from graphs.registry import get_graph
from graphs.router.graph import NODE_OF, graph, route_planner
from state.chainrec.context import ChainRecContext
from state.router.context import RouterContext
from tests.fakes import ScriptedChatModel, install
from world.environment import get_environment

ML_CANDIDATES = ["50", "181", "1", "2", "3", "100", "258", "300", "12", "7"]
METHOD_NODES = {"memory_neighbourhood", "pattern_memories", "intent_evidence", "collaborative_signal"}


UNTRAINED = {"sasrec_embedding_dim": 7, "gru4rec_hidden": 7, "lightgcn_embedding_dim": 7}
"""Model knobs no test trains with: SequentialSignal and GraphSignal find no trained model."""


def offline(tmp_path: Path, **knobs: object) -> RouterContext:
    """A router context whose MemRec graph, AMEM4Rec pool and trained models do not exist (those
    tools are masked)."""
    return RouterContext(
        memrec_memory=str(tmp_path / "no-memory.sqlite"), amem4rec_pool=str(tmp_path / "no-pool"),
        **{**UNTRAINED, **knobs},
    )  # fmt: skip


def test_the_planner_edge_reaches_every_tool_node_and_candidate_rank() -> None:
    drawn = graph.get_graph()
    tool_nodes = {spec.node for spec in ROUTER_TOOLS}
    assert len(tool_nodes) == 17 and tool_nodes >= METHOD_NODES
    assert tool_nodes | {"planner", "validate_input"} <= set(drawn.nodes)
    branches = {e.target for e in drawn.edges if e.source == "planner"}
    assert branches == tool_nodes and all(e.conditional for e in drawn.edges if e.source == "planner")
    back = {e.source for e in drawn.edges if e.target == "planner" and not e.conditional}
    assert back == (tool_nodes - {"candidate_rank"}) | {"validate_input"}
    mermaid = graph.get_graph().draw_mermaid()
    assert "planner -.-> collaborative_signal;" in mermaid and "pattern_memories --> planner;" in mermaid
    everything = {spec.name: True for spec in ROUTER_TOOLS}
    assert route_planner({"next_action": "IntentEvidence", "mask": everything}) == "intent_evidence"
    assert route_planner({"next_action": "IntentEvidence", "mask": {}}) == "candidate_rank"
    assert NODE_OF["MemoryNeighbourhood"] == "memory_neighbourhood"


def test_heuristic_episode_names_each_tool_and_masks_what_cannot_run(tmp_path: Path) -> None:
    request = {"user_id": "7", "candidates": ML_CANDIDATES}
    context = offline(tmp_path)
    first = get_graph("router").invoke(request, context=context)
    again = asyncio.run(get_graph("router").ainvoke(request, context=context))
    assert first["ranking"] == again["ranking"] and first["scores"] == again["scores"]
    assert sorted(first["ranking"]) == sorted(ML_CANDIDATES)
    assert first["ranking"] == sorted(ML_CANDIDATES, key=lambda c: -first["scores"][c])
    tools = first["details"]["tools"]
    assert tools[0] == "CollaborativeSignal" and "PatternMemories" not in tools and len(tools) <= 6
    assert first["details"]["planned_calls"] == len(tools) - 1  # CollaborativeSignal asks no model
    assert first["details"]["planned_tokens"] > 0
    opening = first["trace"][1]
    assert opening["role"] == "planner" and "PatternMemories (no trained AMEM4Rec pool" in opening["content"]
    roles = [role for role, _ in groupby(m["role"] for m in first["trace"])]  # nodes in posting order
    assert roles[2] == "collaborative_signal" and roles[-1] == "candidate_rank"
    assert roles[2:-1:2] == [NODE_OF[tool] for tool in tools]
    assert all(u["calls"] == 0 for u in first["usage"])


def test_unavailable_tools_stay_masked_with_their_reason_in_mask_notes(tmp_path: Path, final_state) -> None:
    request = {"user_id": "7", "candidates": ML_CANDIDATES, "scenario": "cold_user"}
    final = final_state(get_graph("router"), request, offline(tmp_path))
    assert set(final["unavailable"]) == {
        "MemoryNeighbourhood",
        "PatternMemories",
        "SequentialSignal",
        "GraphSignal",
        "AgentMemories",
    }
    assert final["mask_notes"]["AgentMemories"].startswith("no AgentCF memories for ml-100k")
    assert "no MemRec memory graph at" in final["mask_notes"]["MemoryNeighbourhood"]
    assert "SASRec, GRU4Rec not trained for ml-100k" in final["mask_notes"]["SequentialSignal"]
    assert final["mask_notes"]["PatternMemories"].startswith("no trained AMEM4Rec pool")
    # the cold user's plan starts with MemoryNeighbourhood; masked, CollaborativeSignal comes first
    assert final["details"]["tools"][0] == "CollaborativeSignal"
    linked = final["memory"][0]["stats"]["linked_candidates"]
    weak = linked < len(ML_CANDIDATES) / 2  # few candidates co-occur with the history: content next
    assert final["details"]["tools"][1] == ("IntentEvidence" if weak else "ItemProfile")


def test_router_without_method_tools_ranks_exactly_as_chainrec(tmp_path: Path) -> None:
    env = get_environment("ml-100k")
    items = env.item_ids
    for number, user in enumerate(["1", "7", "42", "100"]):
        candidates = [items[(number * 97 + k * 31) % len(items)] for k in range(10)]
        for scenario in ("classic", "cold_user"):
            request = {"user_id": user, "candidates": candidates, "scenario": scenario}
            chainrec = get_graph("chainrec").invoke(request, context=ChainRecContext())
            router = get_graph("router_no_method_tools").invoke(request, context=offline(tmp_path))
            assert router["ranking"] == chainrec["ranking"] and router["scores"] == chainrec["scores"]
            assert router["details"]["tools"] == chainrec["details"]["tools"]


def test_heuristic_episode_on_the_shared_amazon_cds_sample(shared_data: Path, tmp_path: Path) -> None:
    dataset = str(shared_data / "CDs-100-user-dense")
    env = get_environment(dataset)
    user = env.user_ids[0]
    seen = set(env.history(user, "classic"))
    candidates = [item for item in env.item_ids if item not in seen][:8]
    output = get_graph("router_fixed").invoke(
        {"user_id": user, "candidates": candidates}, context=offline(tmp_path, dataset=dataset)
    )
    assert sorted(output["ranking"]) == sorted(candidates)
    tools = output["details"]["tools"]
    # no ratings, authors or locations in this file; no memory graph, no pool here
    chainrec_part = ["LongTermPreference", "ShortTermPreference", "ItemSemantic", "ItemProfile"]
    assert tools == [*chainrec_part, "IntentEvidence", "CollaborativeSignal", "RecencyRanking"]
    assert {m["role"] for m in output["trace"]} >= {"intent_evidence", "collaborative_signal"}


def test_a_garbage_planner_answer_falls_back_to_the_router_rule_planner(monkeypatch, tmp_path: Path) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=["no json here", json.dumps({"verdict": 3})]))
    context = offline(
        tmp_path,
        llm="heuristic",
        planner_model="openai:gpt-4o-mini",
        chainrec_planner="llm",
        chainrec_max_steps=1,
        llm_retries=1,
    )
    output = get_graph("router_llm").invoke({"user_id": "7", "candidates": ML_CANDIDATES}, context=context)
    assert not model.script and len(model.received) == 2
    retry = model.received[1][-1].content
    assert retry.startswith("Your previous answer was rejected: the answer is not valid JSON")
    assert "CollaborativeSignal: Classic collaborative filtering" in model.received[0][-1].content
    planner = next(u for u in output["usage"] if u["agent"] == "planner")
    assert planner["source"] == "fallback" and planner["fallback"]
    assert output["details"]["tools"] == ["CollaborativeSignal"]  # the router rule planner's choice
    opening = output["trace"][1]["content"]
    assert opening.startswith("step 0/1: CollaborativeSignal — [fallback] rule[classic]")
