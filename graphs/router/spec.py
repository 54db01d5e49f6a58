"""The router's registry entries: one planner over every method's agents, its planners
on one conditional edge, and its two ablations (without the method tools = ChainRec's library;
without the cost term in the reward)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graphs.evidence_use import CHAINREC_HISTORY, NO_TRAINING, PLANNER_TRAINING, TOOL_CANDIDATES, EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.router.context import RouterContext

ALL_TOOLS = 16
"""The router's library size (ChainRec's 8 tools and 8 method tools): `router_fixed` may call all."""
PREPARE = "graphs.router.prepare:prepare_for_bench"
"""Runs the method tools' prerequisites (MemRec's memory graph, AMEM4Rec's pool, the trained
baselines' models, AgentCF's memories) before ranking."""
PLANNER_AHEAD = "graphs.router.learned:train_ahead"
"""The learned planners' training, which reads none of the prerequisites' files: a `--workers` run
starts it beside them."""
PLANNER_PARTS = "graphs.router.ahead_parts:ahead_parts"
"""The training world's SASRec, GRU4Rec and LightGCN, which the planners' trajectories read: a
`--workers` run trains each in a step of its own before the planner's."""
TRAINED_PLANNER = (
    "a learned planner checkpoint over the router's catalog (this method's bench prepare trains one: "
    "graphs/router/learned.py)"
)
"""What `router_learned` and `router_learned_no_cost` need before they can rank."""


def router_calls(context: RouterContext, candidates: int) -> CallPlan:
    """At most one tool agent per step of the budget (the trained-signal tools ask none), CandidateRank,
    and with the LLM planner one planning request per decision."""
    steps = context.chainrec_max_steps
    planner = steps + 1 if context.chainrec_planner == "llm" else 0
    note = (
        "plus the prerequisites' prepare (MemRec Stage W warm-up, AMEM4Rec pool and AgentCF memory "
        "training)"
    )
    return CallPlan(steps + 1 + planner, at_most=True, note=note if context.router_method_tools else "")


ROUTER_LEARNS = (
    "its method tools' state: MemRec's memory (with Stage W), AMEM4Rec's pool, BPR's factors, the "
    "baselines' SASRec, GRU4Rec and LightGCN, AgentCF's memories"
)
"""What the router's tools learned from (each from training interactions only)."""


def _router(summary: str, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.router.graph:graph",
        "llm",
        summary,
        RouterContext,
        overrides,
        prepare=PREPARE,
        record_extras="graphs.router.reward:reward_extras",
        llm_calls=router_calls,
        item_vectors=True,
        reported=("chainrec_planner", "router_method_tools", "router_cost_lambda"),
        evidence=EvidenceUse(
            CHAINREC_HISTORY,
            TOOL_CANDIDATES,
            learns_from=ROUTER_LEARNS if overrides.get("router_method_tools", True) else NO_TRAINING,
        ),
    )


def _learned(summary: str, cost: float, **overrides: Any) -> MethodSpec:
    """A learned-planner entry whose planner training (about `cost` CPU seconds, the training
    world's baselines aside: `PLANNER_PARTS`) is a `prepare_ahead` step of its own."""
    spec = _router(summary, chainrec_planner="learned", **overrides)
    learned = f"{ROUTER_LEARNS}; {PLANNER_TRAINING}"
    evidence = replace(spec.evidence, learns_from=learned) if spec.evidence else None
    return replace(
        spec, trained_state=TRAINED_PLANNER, evidence=evidence, prepare_ahead=PLANNER_AHEAD,
        ahead_parts=PLANNER_PARTS, prepare_cost=cost,
    )  # fmt: skip


METHODS: dict[str, MethodSpec] = {
    "router": _router(
        "Router: ChainRec's planner over its tools and MemRec/AMEM4Rec/ARAG/kNN+BPR agents as tools "
        "(rule planner)",
        chainrec_planner="rule",
    ),
    "router_fixed": _router(
        "Router fixed workflow: every feasible tool of the extended library in catalog order",
        chainrec_planner="fixed",
        chainrec_max_steps=ALL_TOOLS,
    ),
    "router_llm": _router(
        "Router with the zero-shot LLM planner (sees each tool's cost)", chainrec_planner="llm"
    ),
    "router_learned": _learned(
        "Router with the learned planner (SFT then DPO over the extended library)", 120
    ),
    "router_learned_scenario": _learned(
        "Router with the learned planner on the scenario-aware state (ablation: the scenario tag and "
        "task facts no tool gathered)",
        70,
        chainrec_planner_state="scenario",
    ),
    "router_no_method_tools": _router(
        "Router without the method tools: ChainRec's library (ranks as chainrec)",
        chainrec_planner="rule",
        router_method_tools=False,
    ),
    "router_learned_no_cost": _learned(
        "Router with the learned planner, no cost term in the reward", 70, router_cost_lambda=0.0
    ),
}
"""The router's planners and ablations as methods (one graph; each is a RouterContext override)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {}
"""None: the router's prerequisites are built by the methods' own services and hooks."""
