"""ChainRec (online): a planner routes among the Tool Agent Library on one conditional edge.

    START -> validate_input -> planner --route_planner--> long_term_preference  -> planner
                                                      --> short_term_preference -> planner
                                                      --> ... (one node per tool)  -> planner
                                                      --> candidate_rank -> END

An episode starts with only (user id, candidate ids). Before every decision the `planner` node
computes the feasibility mask (agents/chainrec/online/mask.py: no tool twice, the step budget
`Context.chainrec_max_steps`, CandidateRank only after evidence and forced once the budget is spent,
domain tools only when the dataset has their data) and stores it on the state; the planner named by
`Context.chainrec_planner` (agents/chainrec/online/planners.py) picks one feasible action; `route_planner`
sends the episode to that tool's node. Each tool node fetches through the environment tools
(tools/chainrec/episode_tools.py), asks its agent (or answers by its fallback) and appends (a_t, o_t) to the
memory M_t. `candidate_rank` orders every candidate from the memory and writes `details` (steps,
tools, trajectory) for the benchmark; the registry's `record_extras` hook adds the reward.

The graph is graphs/chainrec/builder.py's planner graph over ChainRec's library (`CHAINREC`); the
router (graphs/router/graph.py) is the same builder over the extended library.

The learned planner reads its checkpoint once per process and embeds each new memory line with
MiniLM; the planner node's preparation goes to a worker thread whenever a decision would do either,
so `langgraph dev` never sees it block. Without a checkpoint it refuses in one line saying how to
train one; `details.planner_used` names the planner(s) that decided.
"""

from __future__ import annotations

from typing import Literal, get_args

from langgraph.graph import StateGraph

from agents.chainrec.online.catalog import TOOLS
from agents.chainrec.online.library import LIBRARY
from graphs.chainrec.builder import PLANNER, RANK_NODE, build_planner_graph, route_for
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.run_context import compile_method
from state.chainrec.context import ChainRecContext

__all__ = ["NODE_OF", "PLANNER", "RANK_NODE", "Route", "build_chainrec", "builder", "graph", "route_planner"]

CHAINREC = PlannerLibrary("chainrec", TOOLS, LIBRARY, ChainRecContext)
"""ChainRec's library: its eight tools and CandidateRank, every run planning over all of them."""

Route = Literal[
    "long_term_preference",
    "short_term_preference",
    "positive_preference",
    "negative_preference",
    "item_semantic",
    "item_profile",
    "author_preference",
    "geo_context",
    "candidate_rank",
]
"""Every node the planner's conditional edge can lead to (Studio draws one branch each)."""
NODE_OF: dict[str, str] = {spec.name: spec.node for spec in TOOLS}
assert set(get_args(Route)) == set(NODE_OF.values()), "Route must list every tool node"

route_planner = route_for(CHAINREC)
"""The node of the planner's chosen action: a feasible tool's node, otherwise candidate_rank."""


def build_chainrec() -> StateGraph:
    """The uncompiled ChainRec graph (its variants are ChainRecContext overrides in `graphs.registry`)."""
    return build_planner_graph(CHAINREC)


builder = build_chainrec()
"""The ChainRec graph, uncompiled."""
graph = compile_method(builder, "chainrec")
"""ChainRec: planner ⇄ tools, then CandidateRank. `chainrec_fixed` (every feasible tool in catalog
order) and `chainrec_llm_planner` (zero-shot LLM planner) are this graph with ChainRecContext overrides."""
