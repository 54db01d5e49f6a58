"""The router's planning pieces without a graph: the mask over the extended catalog (an unavailable
method tool masked with its reason), the fusion of method-tool evidence (hand-computed), the rule
planner's choices on scripted states, and the planner factory per catalog."""

from __future__ import annotations

from typing import Any

import pytest

from agents.chainrec.online.catalog import (
    CANDIDATE_RANK,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    SHORT_TERM,
    TOOLS,
    parse_chain,
)
from agents.chainrec.online.fusion import fuse
from agents.chainrec.online.mask import feasibility, feasible_actions
from agents.chainrec.online.planners import FixedPlanner, LlmPlanner, RulePlanner, planner_for
from agents.chainrec.online.planning import PlanView
from agents.router.catalog import ROUTER_TOOLS, router_catalog, router_costs
from agents.router.method_tools.collaborative import NAME as COLLABORATIVE
from agents.router.method_tools.intent_evidence import NAME as INTENT_EVIDENCE
from agents.router.method_tools.memory_neighbourhood import NAME as MEMORY_NEIGHBOURHOOD
from agents.router.method_tools.pattern_memories import NAME as PATTERN_MEMORIES
from agents.router.rules import RouterRulePlanner
from graphs.router.graph import ROUTER, rule_for
from state.chainrec.context import ChainRecContext
from state.router.context import RouterContext

PLAIN = {"ratings": True, "reviews": False, "categories": True, "timestamps": True}
NO_POOL = "no trained AMEM4Rec pool for ml-100k: run `recgraph amem4rec train`"
CANDIDATES = ("c1", "c2", "c3", "c4")


def entry(tool: str, step: int, stats: dict[str, float] | None = None, items: Any = ()) -> dict[str, Any]:
    return {
        "step": step,
        "tool": tool,
        "facets": [],
        "confidence": 0.5,
        "summary": "",
        "items": list(items),
        "source": "heuristic",
        "stats": stats or {},
        "evidence": [],
    }


def view(
    memory: list[dict[str, Any]] | None = None,
    scenario: str = "classic",
    unavailable: dict[str, str] | None = None,
    max_steps: int = 6,
) -> PlanView:
    memory = memory or []
    used = [e["tool"] for e in memory]
    mask, notes = feasibility(used, max_steps, PLAIN, ROUTER_TOOLS, unavailable)
    costs = router_costs(RouterContext())
    return PlanView(
        "u",
        CANDIDATES,
        scenario,
        tuple(memory),
        mask,
        notes,
        max_steps,
        PLAIN,
        ROUTER_TOOLS,
        costs,
        ROUTER.catalog_note,
    )


def test_an_unavailable_method_tool_is_masked_with_its_reason() -> None:
    mask, notes = feasibility([], 6, PLAIN, ROUTER_TOOLS, {PATTERN_MEMORIES: NO_POOL})
    assert not mask[PATTERN_MEMORIES] and notes[PATTERN_MEMORIES] == NO_POOL
    assert mask[MEMORY_NEIGHBOURHOOD] and mask[INTENT_EVIDENCE] and mask[COLLABORATIVE]
    assert not mask[CANDIDATE_RANK]  # no evidence yet
    assert feasible_actions(mask, ROUTER_TOOLS)[-7:] == [
        MEMORY_NEIGHBOURHOOD, INTENT_EVIDENCE, COLLABORATIVE, "SequentialSignal", "GraphSignal",
        "AgentMemories", "RecencyRanking",
    ]  # fmt: skip
    # the domain rule comes first; a used method tool is "already called"
    mask, notes = feasibility([COLLABORATIVE], 6, PLAIN, ROUTER_TOOLS, {PATTERN_MEMORIES: NO_POOL})
    assert notes[COLLABORATIVE] == "already called"
    assert notes["AuthorPreference"] == "the dataset has no authors"
    assert mask[CANDIDATE_RANK]
    # ChainRec's catalog never offers a method tool
    chainrec_mask, _ = feasibility([], 6, PLAIN)
    assert COLLABORATIVE not in chainrec_mask and len(chainrec_mask) == len(TOOLS)


def test_method_tools_carry_their_planned_cost() -> None:
    costs = router_costs(RouterContext())
    assert set(costs) == {spec.name for spec in ROUTER_TOOLS}
    for free in (COLLABORATIVE, "SequentialSignal", "GraphSignal"):
        assert costs[free].calls == 0 and costs[free].tokens(10) == 0
    for tool in (MEMORY_NEIGHBOURHOOD, PATTERN_MEMORIES, INTENT_EVIDENCE, ITEM_SEMANTIC):
        cost = costs[tool]
        assert cost.calls == 1 and cost.tokens(20) > cost.tokens(10) > 0
    assert costs[COLLABORATIVE].describe(10) == "no LLM call"
    assert costs[ITEM_PROFILE].describe(10) == f"1 LLM call, ~{costs[ITEM_PROFILE].tokens(10)} tokens"


def test_fusion_weighs_method_tool_evidence_like_item_tools() -> None:
    records = [{"item_id": c, "categories": []} for c in ("c1", "c2", "c3")]
    collaborative = entry(COLLABORATIVE, 1)
    collaborative["confidence"] = 0.8
    scores = {"c1": 0.9, "c2": 0.1, "c3": 0.5}
    collaborative["items"] = [{"item_id": c, "score": s, "note": ""} for c, s in scores.items()]
    profile = entry(ITEM_PROFILE, 2)
    scores = {"c1": 0.2, "c2": 0.6, "c3": 0.4}
    profile["items"] = [{"item_id": c, "score": s, "note": ""} for c, s in scores.items()]
    ctx = RouterContext(chainrec_weight_collaborative=2.0, chainrec_weight_item_profile=3.0)
    fused = fuse(None, ctx, records, [collaborative, profile])  # type: ignore[arg-type]
    # ranks: collaborative (1, 0, 0.5) at 2.0 x 0.8 = 1.6; profile (0, 1, 0.5) at 3.0 x 0.5 = 1.5
    assert fused.weights == {COLLABORATIVE: pytest.approx(1.6), ITEM_PROFILE: pytest.approx(1.5)}
    assert fused.scores == {
        "c1": round(1.6 / 3.1, 6),
        "c2": round(1.5 / 3.1, 6),
        "c3": 0.5,
    }
    assert fused.order == ["c1", "c3", "c2"]
    # ChainRec's context has no method-tool weights: the method tool counts for nothing
    plain = fuse(None, ChainRecContext(), records, [collaborative, profile])  # type: ignore[arg-type]
    assert COLLABORATIVE not in plain.weights and plain.order == ["c2", "c3", "c1"]


def test_rule_planner_uses_the_method_tools_by_state() -> None:
    rule = RouterRulePlanner()
    assert rule.decide(view()).action == COLLABORATIVE  # a user with history: collaborative first
    assert rule.decide(view(scenario="cold_user")).action == MEMORY_NEIGHBOURHOOD
    assert rule.decide(view(scenario="cold_item")).action == INTENT_EVIDENCE
    assert rule.decide(view(scenario="evolving_short")).action == SHORT_TERM
    after_short = [entry(SHORT_TERM, 1, {"recent_items": 5, "history_items": 40})]
    assert rule.decide(view(after_short, scenario="evolving_short")).action == PATTERN_MEMORIES
    # no memory graph: the cold user's plan skips to the next tool
    no_graph = {MEMORY_NEIGHBOURHOOD: "no MemRec memory graph"}
    assert rule.decide(view(scenario="cold_user", unavailable=no_graph)).action == COLLABORATIVE
    # a short history reported by a tool turns a classic episode cold
    short = [entry(COLLABORATIVE, 1, {"history_items": 3, "linked_candidates": 3})]
    assert rule.decide(view(short)).action == MEMORY_NEIGHBOURHOOD
    # collaborative evidence links few candidates: content tools come next
    weak = [entry(COLLABORATIVE, 1, {"history_items": 40, "linked_candidates": 1})]
    planned = [tool for tool in rule.plan(view(weak)) if tool not in ("GeoContext", "AuthorPreference")]
    assert planned[:3] == [COLLABORATIVE, INTENT_EVIDENCE, ITEM_SEMANTIC]
    assert rule.decide(view(weak)).action == INTENT_EVIDENCE
    strong = [entry(COLLABORATIVE, 1, {"history_items": 40, "linked_candidates": 4})]
    assert rule.decide(view(strong)).action == LONG_TERM


def test_rule_planner_stops_when_its_plan_is_done() -> None:
    plan = RouterRulePlanner.PLANS["cold_user"]
    memory = [entry(tool, i + 1, {"history_items": 2, "linked_candidates": 4}) for i, tool in enumerate(plan)]
    choice = RouterRulePlanner().decide(view(memory, scenario="cold_user"))
    assert choice.action == CANDIDATE_RANK and choice.reason.startswith("rule[cold_user]: plan done")


def test_planners_plan_over_the_catalog_they_are_given() -> None:
    ctx = RouterContext(chainrec_planner="fixed")
    fixed = planner_for(ctx, ROUTER_TOOLS, rule_for(ROUTER_TOOLS))
    assert isinstance(fixed, FixedPlanner) and fixed.chain[-8:] == [
        MEMORY_NEIGHBOURHOOD,
        PATTERN_MEMORIES,
        INTENT_EVIDENCE,
        COLLABORATIVE,
        "SequentialSignal",
        "GraphSignal",
        "AgentMemories",
        "RecencyRanking",
    ]
    assert parse_chain("collaborative_signal, ItemProfile", ROUTER_TOOLS) == [COLLABORATIVE, ITEM_PROFILE]
    with pytest.raises(ValueError, match="unknown ChainRec tool 'collaborative_signal'"):
        parse_chain("collaborative_signal")  # not in ChainRec's library
    llm = planner_for(RouterContext(chainrec_planner="llm"), ROUTER_TOOLS, rule_for(ROUTER_TOOLS))
    assert isinstance(llm, LlmPlanner) and isinstance(llm.backup, RouterRulePlanner)
    assert type(rule_for(TOOLS)) is RulePlanner and type(rule_for(ROUTER_TOOLS)) is RouterRulePlanner
    assert router_catalog(RouterContext()) == ROUTER_TOOLS
    assert router_catalog(RouterContext(router_method_tools=False)) == TOOLS
    assert router_catalog(ChainRecContext()) == TOOLS


def test_llm_planner_prompt_lists_the_catalog_with_costs() -> None:
    task = LlmPlanner(RouterRulePlanner()).task(view(unavailable={PATTERN_MEMORIES: NO_POOL}))
    prompt = task.messages[-1].content
    assert "- CollaborativeSignal: Classic collaborative filtering" in prompt
    assert "Cost: no LLM call." in prompt and "tokens." in prompt and "call a costly tool only" in prompt
    assert f"PatternMemories ({NO_POOL})" in prompt
    assert PATTERN_MEMORIES not in task.json_schema["properties"]["action"]["enum"]
    # ChainRec's view shows no costs: its prompt is as before
    mask, notes = feasibility([], 6, PLAIN)
    chainrec = LlmPlanner().task(PlanView("u", CANDIDATES, "classic", (), mask, notes, 6, PLAIN))
    assert "Cost:" not in chainrec.messages[-1].content and "costly" not in chainrec.messages[-1].content
