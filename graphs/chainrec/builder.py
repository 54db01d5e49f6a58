"""The planner graph over a tool library: ChainRec's (graphs/chainrec/graph.py) and the router's
(graphs/router/graph.py) are both `build_planner_graph(library)`.

    START -> validate_input -> planner --route--> <one node per tool> -> planner
                                               --> candidate_rank -> END

Before every decision the `planner` node computes the feasibility mask over the run's catalog
(`PlannerLibrary.catalog_of`; agents/chainrec/online/mask.py) with the tools that cannot run this
episode (`PlannerLibrary.unavailable`, found once on the first visit) masked with their reason; the
planner named by `Context.chainrec_planner` picks one feasible action and the conditional edge sends
the episode to that tool's node. Each tool node fetches, asks its agent (or answers by its
fallback) and appends (a_t, o_t) to the memory. `candidate_rank` orders every candidate from the
memory and writes `details`. The planner node is planner_node.py, the tool nodes and candidate_rank
tool_nodes.py; this module wires them.
"""

from __future__ import annotations

from collections.abc import Callable

from langgraph.graph import END, START, StateGraph

from agents.chainrec.online.catalog import CANDIDATE_RANK
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.chainrec.planner_node import PLANNER, first_visit_for, planner_blocks, planner_preparer
from graphs.chainrec.tool_nodes import RANK_NODE, rank_blocks, rank_preparer, tool_preparer
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import agent_node
from state.chainrec.state import ChainRecState
from state.contract import RecInput, RecOutput


def route_for(library: PlannerLibrary) -> Callable[[ChainRecState], str]:
    """The conditional edge's function: a feasible tool's node (the one the planner node resolved in
    the run's library, else the graph's node of that name), otherwise candidate_rank."""
    nodes = {spec.name: spec.node for spec in library.tools}
    graph_nodes = set(nodes.values())

    def route_planner(state: ChainRecState) -> str:
        """The node of the planner's chosen action: a feasible tool's node, otherwise candidate_rank."""
        action = state.get("next_action", CANDIDATE_RANK)
        node = state.get("next_node") or nodes.get(action)
        feasible = state.get("mask", {}).get(action, False)
        if action != CANDIDATE_RANK and node in graph_nodes and node != RANK_NODE and feasible:
            return node
        return RANK_NODE

    return route_planner


def build_planner_graph(library: PlannerLibrary) -> StateGraph:
    """The uncompiled planner graph over `library`: one node per tool, the planner's conditional edge
    listing every node it can lead to (Studio draws one branch each)."""
    builder = StateGraph(
        library.state_schema,
        input_schema=RecInput,
        output_schema=RecOutput,
        context_schema=library.context_schema,
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    planner = agent_node(
        PLANNER,
        planner_preparer(library),
        blocking_prepare=planner_blocks,
        first_step=first_visit_for(library),
    )
    builder.add_node(PLANNER, planner)
    targets = []
    for spec in library.tools:
        if spec.name == CANDIDATE_RANK:
            continue
        blocking = spec.name in library.blocking_tools
        node = agent_node(spec.node, tool_preparer(spec, library), blocking_prepare=blocking)
        builder.add_node(spec.node, node)
        builder.add_edge(spec.node, PLANNER)
        targets.append(spec.node)
    rank = agent_node(RANK_NODE, rank_preparer(library), blocking_prepare=rank_blocks)
    builder.add_node(RANK_NODE, rank)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, PLANNER)
    builder.add_conditional_edges(PLANNER, route_for(library), [*targets, RANK_NODE])
    builder.add_edge(RANK_NODE, END)
    return builder
