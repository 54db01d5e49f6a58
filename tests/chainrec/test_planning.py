"""ChainRec's pure planning parts: the feasibility mask (each rule), `route_planner` (every branch),
the planners behind one interface (rule by scenario and memory, fixed, repair of infeasible and
unknown choices, the LLM planner's validation) and the reward."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from agents.base import InvalidAnswer
from agents.chainrec.offline.reward import avg_hr, reward, trajectory_reward
from agents.chainrec.online.catalog import (
    AUTHOR,
    CANDIDATE_RANK,
    EVIDENCE_TOOLS,
    GEO,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    NEGATIVE,
    POSITIVE,
    SHORT_TERM,
    parse_chain,
)
from agents.chainrec.online.mask import feasibility, feasible_actions, forced
from agents.chainrec.online.planners import FixedPlanner, LlmPlanner, RulePlanner
from agents.chainrec.online.planning import PlanView, planner_call
from graphs.chainrec.graph import NODE_OF, Route, graph, route_planner
from state.chainrec.schemas import PlannerChoice

PLAIN = {
    "ratings": True,
    "reviews": False,
    "categories": True,
    "timestamps": True,
    "authors": False,
    "locations": False,
}
RICH = {**PLAIN, "reviews": True, "authors": True, "locations": True}


def entry(tool: str, **stats: float) -> dict[str, Any]:
    """A memory entry as a tool writes it (only what the planners read matters here)."""
    return {
        "step": 0,
        "tool": tool,
        "facets": [],
        "confidence": 0.5,
        "summary": f"{tool} ran",
        "items": [],
        "source": "heuristic",
        "stats": stats,
    }


def view(memory: list[dict], scenario: str = "classic", domain: dict = PLAIN, max_steps: int = 6) -> PlanView:
    mask, notes = feasibility([e["tool"] for e in memory], max_steps, domain)
    return PlanView("u1", ("a", "b", "c"), scenario, tuple(memory), mask, notes, max_steps, domain)


def test_mask_rule_domain_tools_need_their_data() -> None:
    mask, notes = feasibility([], 6, PLAIN)
    assert not mask[AUTHOR] and notes[AUTHOR] == "the dataset has no authors"
    assert not mask[GEO] and notes[GEO] == "the dataset has no locations"
    assert mask[POSITIVE] and mask[NEGATIVE]
    mask, notes = feasibility([], 6, {**PLAIN, "ratings": False})
    assert not mask[POSITIVE] and notes[NEGATIVE] == "the dataset has no ratings"
    assert feasibility([], 6, RICH)[0][AUTHOR] and feasibility([], 6, RICH)[0][GEO]


def test_mask_rule_no_tool_twice() -> None:
    mask, notes = feasibility([LONG_TERM, ITEM_PROFILE], 6, PLAIN)
    assert not mask[LONG_TERM] and notes[LONG_TERM] == "already called"
    assert not mask[ITEM_PROFILE] and mask[SHORT_TERM]


def test_mask_rule_candidate_rank_needs_evidence_and_is_forced_by_the_budget() -> None:
    mask, notes = feasibility([], 6, PLAIN)
    assert not mask[CANDIDATE_RANK] and notes[CANDIDATE_RANK] == "needs at least one evidence tool first"
    assert feasible_actions(mask) == [LONG_TERM, SHORT_TERM, POSITIVE, NEGATIVE, ITEM_SEMANTIC, ITEM_PROFILE]
    mask, _ = feasibility([LONG_TERM], 6, PLAIN)
    assert mask[CANDIDATE_RANK] and not forced(mask)
    mask, notes = feasibility([LONG_TERM, SHORT_TERM], 2, PLAIN)
    assert feasible_actions(mask) == [CANDIDATE_RANK] and forced(mask)
    assert notes[ITEM_PROFILE] == "step budget of 2 spent" and notes[LONG_TERM] == "already called"
    six = [LONG_TERM, SHORT_TERM, POSITIVE, NEGATIVE, ITEM_SEMANTIC, ITEM_PROFILE]
    mask, _ = feasibility(six, 10, PLAIN)  # nothing left to call under a larger budget: rank
    assert forced(mask)


def test_route_planner_every_branch() -> None:
    everything = dict.fromkeys([*EVIDENCE_TOOLS, CANDIDATE_RANK], True)
    for tool in EVIDENCE_TOOLS:
        assert route_planner({"next_action": tool, "mask": everything}) == NODE_OF[tool]
    assert route_planner({"next_action": CANDIDATE_RANK, "mask": everything}) == "candidate_rank"
    assert route_planner({"next_action": GEO, "mask": {**everything, GEO: False}}) == "candidate_rank"
    assert route_planner({"next_action": "Telepathy", "mask": everything}) == "candidate_rank"
    assert route_planner({}) == "candidate_rank"
    assert set(get_args(Route)) == {*NODE_OF.values()}


def test_studio_draws_every_branch_of_the_planner() -> None:
    drawn = graph.get_graph()
    targets = {edge.target for edge in drawn.edges if edge.source == "planner"}
    assert targets == set(NODE_OF.values())
    assert all(edge.conditional for edge in drawn.edges if edge.source == "planner")
    for node in (n for n in NODE_OF.values() if n != "candidate_rank"):
        assert [e.target for e in drawn.edges if e.source == node] == ["planner"]


def run_planner(
    planner: Any, stats: dict[str, dict], scenario: str = "classic", domain: dict = PLAIN, max_steps: int = 6
) -> list[str]:
    """Drive a planner over synthetic tool outputs (each tool reports `stats[tool]`) until it ranks."""
    memory: list[dict] = []
    while True:
        current = view(memory, scenario, domain, max_steps)
        call = planner_call(planner, current, RulePlanner())
        assert not call.needed and not call.repairs
        action = call.task.fallback().action
        assert current.mask[action]
        if action == CANDIDATE_RANK:
            return [e["tool"] for e in memory]
        memory.append(entry(action, **stats.get(action, {})))


USUAL = {
    LONG_TERM: {"history_items": 40, "high_rated_items": 9, "low_rated_items": 1},
    SHORT_TERM: {"recent_items": 5},
}


def test_rule_planner_adapts_to_the_scenario() -> None:
    rule = RulePlanner()
    assert run_planner(rule, USUAL) == [LONG_TERM, SHORT_TERM, ITEM_PROFILE, ITEM_SEMANTIC, POSITIVE]
    assert run_planner(rule, USUAL, "cold_user") == [ITEM_PROFILE, ITEM_SEMANTIC]
    assert run_planner(rule, USUAL, "cold_item") == [ITEM_SEMANTIC, LONG_TERM, SHORT_TERM]
    assert run_planner(rule, USUAL, "evolving_short") == [SHORT_TERM, ITEM_SEMANTIC, ITEM_PROFILE]
    assert run_planner(rule, USUAL, "evolving_long") == [SHORT_TERM, LONG_TERM, ITEM_SEMANTIC, ITEM_PROFILE]


def test_rule_planner_reads_the_memory() -> None:
    rule = RulePlanner()
    short_history = {LONG_TERM: {"history_items": 4}}
    assert run_planner(rule, short_history) == [LONG_TERM, ITEM_PROFILE, ITEM_SEMANTIC]
    thin_window = {SHORT_TERM: {"recent_items": 1}}
    assert run_planner(rule, thin_window, "evolving_short") == [
        SHORT_TERM,
        LONG_TERM,
        ITEM_SEMANTIC,
        ITEM_PROFILE,
    ]
    dislikes = {LONG_TERM: {"history_items": 40, "high_rated_items": 9, "low_rated_items": 3}}
    assert run_planner(rule, dislikes) == [
        LONG_TERM,
        SHORT_TERM,
        ITEM_PROFILE,
        ITEM_SEMANTIC,
        POSITIVE,
        NEGATIVE,
    ]
    no_likes = {LONG_TERM: {"history_items": 40, "high_rated_items": 0}}
    assert run_planner(rule, no_likes) == [LONG_TERM, SHORT_TERM, ITEM_PROFILE, ITEM_SEMANTIC]
    # Geo first and Author second when the data has them; the budget of 6 cuts the plan.
    assert run_planner(rule, USUAL, domain=RICH) == [
        GEO,
        LONG_TERM,
        AUTHOR,
        SHORT_TERM,
        ITEM_PROFILE,
        ITEM_SEMANTIC,
    ]


def test_fixed_planner_runs_its_chain_and_skips_what_is_infeasible() -> None:
    assert run_planner(FixedPlanner(parse_chain("")), {}, max_steps=8) == list(EVIDENCE_TOOLS[:6])
    assert run_planner(FixedPlanner(parse_chain("")), {}, domain=RICH, max_steps=8) == list(EVIDENCE_TOOLS)
    chain = parse_chain("item_profile, GeoContext, LongTermPreference")
    assert run_planner(FixedPlanner(chain), {}) == [ITEM_PROFILE, LONG_TERM]
    with pytest.raises(ValueError, match="unknown ChainRec tool 'Telepathy'"):
        parse_chain("LongTermPreference, Telepathy")


class Stubborn:
    """A model-free planner that always proposes the same action."""

    name = "stubborn"

    def __init__(self, action: str) -> None:
        self.action = action

    def decide(self, current: PlanView) -> PlannerChoice:
        return PlannerChoice(action=self.action, reason="always this", scores={self.action: 1.0})


def test_infeasible_or_unknown_choices_are_repaired_and_counted() -> None:
    start = view([])
    call = planner_call(Stubborn(GEO), start, RulePlanner())  # no locations in PLAIN
    choice = call.task.fallback()
    assert call.repairs == ["infeasible_action"] and choice.action == LONG_TERM
    assert choice.reason.startswith("proposed 'GeoContext' (infeasible action); rule[classic]")
    call = planner_call(Stubborn("Telepathy"), start, RulePlanner())
    assert call.repairs == ["unknown_action"] and call.task.fallback().action == LONG_TERM
    call = planner_call(Stubborn(CANDIDATE_RANK), start, RulePlanner())  # ranking before any evidence
    assert call.repairs == ["infeasible_action"]
    call = planner_call(Stubborn("item_profile"), start, RulePlanner())  # the node name is accepted
    assert call.repairs == [] and call.task.fallback().action == ITEM_PROFILE


def test_llm_planner_validation_repairs_and_constrains_the_action() -> None:
    planner = LlmPlanner()
    current = view([entry(LONG_TERM, history_items=40)])
    call = planner_call(planner, current, RulePlanner())
    assert call.needed
    schema = call.task.json_schema["properties"]["action"]
    assert schema["enum"] == [SHORT_TERM, POSITIVE, NEGATIVE, ITEM_SEMANTIC, ITEM_PROFILE, CANDIDATE_RANK]
    prompt = str(call.task.messages[-1].content)
    assert 'LongTermPreference (confidence 0.50): "LongTermPreference ran' in prompt
    assert "GeoContext (the dataset has no locations)" in prompt and "Steps used: 1 of 6" in prompt
    ok, repairs = call.task.validate(PlannerChoice(action="short term preference", reason="recent intent"))
    assert (ok.action, ok.scores, repairs) == (SHORT_TERM, {SHORT_TERM: 1.0}, [])
    fixed, repairs = call.task.validate(PlannerChoice(action=LONG_TERM, reason="again"))
    assert repairs == ["infeasible_action"] and fixed.action == SHORT_TERM
    fixed, repairs = call.task.validate(PlannerChoice(action="AskTheOracle"))
    assert repairs == ["unknown_action"] and fixed.action == SHORT_TERM
    with pytest.raises(InvalidAnswer):
        call.task.validate(PlannerChoice(action="  "))
    assert call.task.fallback().action == SHORT_TERM  # the rule planner
    budget_spent = view([entry(t) for t in (LONG_TERM, SHORT_TERM)], max_steps=2)
    assert not planner_call(planner, budget_spent, RulePlanner()).needed  # forced: nobody is asked


def test_reward_is_avg_hr_minus_lambda_per_tool() -> None:
    assert avg_hr(["a", "b", "c", "d", "e", "f"], "a") == 1.0
    assert avg_hr(["a", "b", "c", "d", "e", "f"], "c") == pytest.approx(2 / 3)
    assert avg_hr(["a", "b", "c", "d", "e", "f"], "e") == pytest.approx(1 / 3)
    assert avg_hr(["a", "b", "c", "d", "e", "f"], "f") == 0.0
    assert reward(2 / 3, 4, 0.05) == pytest.approx(2 / 3 - 0.2)
    assert trajectory_reward(["x", "y"], "y", 3, 0.01) == pytest.approx(2 / 3 - 0.03)
    with pytest.raises(ValueError):
        reward(1.0, -1, 0.1)
