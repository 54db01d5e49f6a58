"""ChainRec's registry entries: the planner variants on one graph (rule, fixed, LLM, learned)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from agents.chainrec.online.catalog import GEO
from graphs.evidence_use import CHAINREC_HISTORY, PLANNER_TRAINING, TOOL_CANDIDATES, EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.chainrec.context import ChainRecContext

ALL_TOOLS = 8
"""The Tool Agent Library's size: `chainrec_fixed` may call every tool (agents/chainrec/online/catalog.py)."""

LEARNED = "graphs.chainrec.learned:train_for_bench"
"""Finds or trains (trajectories, SFT, DPO) the learned planner's checkpoint before ranking."""


TRAINED_PLANNER = "a learned planner checkpoint (`recgraph chainrec train`, or this method's bench prepare)"
"""What the learned-planner entries (`_learned`) need before they can rank."""


def chainrec_calls(context: ChainRecContext, candidates: int) -> CallPlan:
    """At most one tool agent per step of the budget, CandidateRank, and with the LLM planner one
    planning request per decision."""
    steps = context.chainrec_max_steps
    planner = steps + 1 if context.chainrec_planner == "llm" else 0
    return CallPlan(steps + 1 + planner, at_most=True)


def _chainrec(summary: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.chainrec.graph:graph",
        "llm",
        summary,
        ChainRecContext,
        overrides,
        record_extras="graphs.chainrec.reward:reward_extras",
        llm_calls=chainrec_calls,
        cli="recgraph.chainrec.command:register",
        item_vectors=True,
        reported=("chainrec_planner", "chainrec_checkpoint"),
        evidence=EvidenceUse(CHAINREC_HISTORY, TOOL_CANDIDATES),
    )


def _learned(summary: str, cost: float, **overrides: Any) -> MethodSpec:
    """A learned-planner entry: bench's prepare trains the checkpoint it needs (about `cost` CPU
    seconds, `MethodSpec.prepare_cost`); the knobs it overrides are reported beside the planner and
    its checkpoint."""
    spec = _chainrec(summary, chainrec_planner="learned", **overrides)
    reported = ("chainrec_planner", "chainrec_checkpoint", *overrides)
    evidence = replace(spec.evidence, learns_from=PLANNER_TRAINING) if spec.evidence else None
    return replace(
        spec, prepare=LEARNED, trained_state=TRAINED_PLANNER, reported=reported, evidence=evidence,
        prepare_cost=cost,
    )  # fmt: skip


METHODS: dict[str, MethodSpec] = {
    "chainrec": _chainrec(
        "ChainRec: a planner routes tool agents on a conditional edge, then CandidateRank (rule planner)",
        chainrec_planner="rule",
    ),
    "chainrec_fixed": _chainrec(
        "ChainRec fixed workflow: every feasible tool in catalog order, then CandidateRank",
        chainrec_planner="fixed",
        chainrec_max_steps=ALL_TOOLS,
    ),
    "chainrec_llm_planner": replace(
        _chainrec("ChainRec with the zero-shot LLM planner", chainrec_planner="llm"),
        prepare="graphs.chainrec.llm_planner:mark_backend",  # not_run_reason under the heuristic backend
    ),
    "chainrec_no_geo": _chainrec(
        "ChainRec without GeoContext (the paper's Table 4 ablation): the rule planner over the library "
        "minus GeoContext",
        chainrec_planner="rule",
        chainrec_drop_tools=GEO,
    ),
    "chainrec_learned": _learned(
        "ChainRec with the learned planner (SFT then DPO; bench trains it when missing, Studio "
        "needs a trained checkpoint)",
        50,
    ),
    "chainrec_learned_scenario": _learned(
        "ChainRec with the learned planner on the scenario-aware state (ablation: the scenario tag "
        "and task facts no tool gathered beside the memory)",
        28,
        chainrec_planner_state="scenario",
    ),
    "chainrec_sft": _learned(
        "ChainRec with the learned planner after SFT only (checkpoint as chainrec_learned)",
        5,
        chainrec_policy_stage="sft",
    ),
}
"""ChainRec's planners as methods (one graph; the planner is a context knob)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {}
"""None: ChainRec's offline stages run from `recgraph chainrec ...`, not as served graphs."""
