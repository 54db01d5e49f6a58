"""The router: ChainRec's planner over ChainRec's library plus the method tools.

    START -> validate_input -> planner --route_planner--> <ChainRec's 8 tool nodes>      -> planner
                                                      --> memory_neighbourhood (MemRec)  -> planner
                                                      --> pattern_memories (AMEM4Rec)    -> planner
                                                      --> intent_evidence (ARAG)         -> planner
                                                      --> collaborative_signal (kNN, BPR) -> planner
                                                      --> candidate_rank -> END

It is graphs/chainrec/builder.py's planner graph over the extended library
(agents/router/catalog.py): every planner (`chainrec_planner`: rule,
llm, fixed, learned) decides on the same conditional edge. Per run the catalog is the router's
(`router_method_tools`, default) or ChainRec's alone (then it ranks as `chainrec` does). On the
first visit the planner finds the method tools that cannot run (no MemRec memory graph, no trained
AMEM4Rec pool: each tool's `unavailable`), off the event loop; they stay masked for the episode with
that reason in `mask_notes`. The rule planner is agents/router/rules.py; the LLM
planner's prompt lists each action's planned cost (LLM calls and tokens). CandidateRank fuses every
entry of the memory with the `chainrec_weight_*` knobs (method tools are item tools) and its
`details` add the chain's planned LLM calls and tokens (the reward's cost term).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import StateGraph

from agents.chainrec.online.catalog import Catalog
from agents.chainrec.online.planners import RulePlanner
from agents.chainrec.online.planning import Planner
from agents.router.catalog import (
    BLOCKING_TOOLS,
    METHOD_TOOLS,
    ROUTER_LIBRARY,
    ROUTER_TOOLS,
    router_catalog,
    router_costs,
    unavailable_tools,
)
from agents.router.rules import RouterRulePlanner
from graphs.chainrec.builder import PLANNER, RANK_NODE, build_planner_graph, route_for
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.run_context import compile_method
from prompts.router import COST_NOTE
from state.chainrec.context import ChainRecContext
from state.router.context import RouterContext
from state.router.state import RouterState

__all__ = ["NODE_OF", "PLANNER", "RANK_NODE", "ROUTER", "builder", "graph", "route_planner"]


def rule_for(catalog: Catalog) -> Planner:
    """ChainRec's rule planner over a ChainRec library alone; the router's when the method tools are in."""
    names = {spec.name for spec in catalog}
    return RouterRulePlanner() if names & {spec.name for spec in METHOD_TOOLS} else RulePlanner()


def planned_cost(state: Any, ctx: ChainRecContext) -> dict[str, Any]:
    """The chain's planned LLM calls and tokens (every tool call; CandidateRank not counted)."""
    costs = router_costs(ctx)
    tools = [entry["tool"] for entry in state.get("memory", [])]
    candidates = len(state.get("candidates") or ())
    return {
        "planned_calls": sum(costs[tool].calls for tool in tools),
        "planned_tokens": sum(costs[tool].tokens(candidates) for tool in tools),
    }


ROUTER = PlannerLibrary(
    "router",
    ROUTER_TOOLS,
    ROUTER_LIBRARY,
    RouterContext,
    state_schema=RouterState,
    catalog_of=router_catalog,
    unavailable=unavailable_tools,
    costs=router_costs,
    rule_for=rule_for,
    details_extras=planned_cost,
    catalog_note=COST_NOTE,
    blocking_tools=BLOCKING_TOOLS,
)
"""The router's library: ChainRec's tools, the four method tools and CandidateRank."""

NODE_OF: dict[str, str] = {spec.name: spec.node for spec in ROUTER_TOOLS}
"""Action -> the node that runs it."""
route_planner = route_for(ROUTER)
"""The node of the planner's chosen action: a feasible tool's node, otherwise candidate_rank."""


def build_router() -> StateGraph:
    """The uncompiled router graph (its variants are RouterContext overrides in `graphs.registry`)."""
    return build_planner_graph(ROUTER)


builder = build_router()
"""The router graph, uncompiled."""
graph = compile_method(builder, "router")
"""The router: planner ⇄ (ChainRec's tools and the method tools), then CandidateRank."""
