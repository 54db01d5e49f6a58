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
memory and writes `details`.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from agents.base import AgentResult
from agents.chainrec.online.candidate_rank import rank_call
from agents.chainrec.online.catalog import CANDIDATE_RANK, Catalog, ToolSpec
from agents.chainrec.online.degraded import switched_off
from agents.chainrec.online.learned_planner import LearnedPlanner, needs_blocking
from agents.chainrec.online.library_file import library_loaded, library_of
from agents.chainrec.online.mask import feasibility, forced
from agents.chainrec.online.planners import check_library, planner_for, ranking_context
from agents.chainrec.online.planning import PlanView, planner_call
from agents.chainrec.online.tool_agent import answer_context, memory_entry, tool_task
from graphs.chainrec.episode import episode_details, episode_of
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, FirstStep, PrepareAgent, agent_node
from graphs.run_context import current_context
from state.blackboard import post
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState, Decision
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from tools.catalog_index import retrieve_candidates
from tools.chainrec.episode_corpus import corpus_of
from world.environment import Environment, get_environment
from world.errors import RecgraphError

PLANNER = "planner"
RANK_NODE = "candidate_rank"

_warmed: weakref.WeakSet[Environment] = weakref.WeakSet()


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


def first_visit_for(library: PlannerLibrary) -> FirstStep:
    """The episode's first planner visit: load the tools' corpus, retrieve candidates in retrieve
    mode, and (the router) find the tools that cannot run this episode."""

    def first_visit(state: ChainRecState) -> dict[str, Any]:
        ctx = current_context()
        library_of(ctx)  # the run's library file, read once per process (off the event loop)
        env = get_environment(ctx.dataset)
        if env not in _warmed:
            corpus_of(env)
            env.item_vectors()
            _warmed.add(env)
        update: dict[str, Any] = {}
        if state.get("retrieve_mode") or not state.get("candidates"):
            found = retrieve_candidates(env, state.get("history", []), ctx.top_k, state.get("user_id"))
            update["candidates"] = found
            update["trace"] = [post(PLANNER, f"retrieve mode: {len(found)} catalog items")]
        if library.tracks_unavailable:  # after retrieval: a tool may be unable to serve these candidates
            episode = {**state, **update}
            update["unavailable"] = library.unavailable(env, ctx, library.catalog_of(ctx), episode)
        return update

    def blocks(state: ChainRecState) -> bool:
        ctx = current_context()
        env = get_environment(ctx.dataset)
        return (
            not library_loaded(ctx)
            or library.tracks_unavailable
            or env not in _warmed
            or bool(state.get("retrieve_mode") or not state.get("candidates"))
        )

    return FirstStep(needed=lambda state: not state.get("domain"), run=first_visit, blocks=blocks)


def plan_view(
    library: PlannerLibrary, state: ChainRecState, ctx: ChainRecContext, domain: dict[str, bool]
) -> PlanView:
    """S_t with the mask computed now over the run's catalog (the planner never sees a stale mask)."""
    if ctx.chainrec_max_steps < 1:
        raise RecgraphError(f"chainrec_max_steps must be at least 1, got {ctx.chainrec_max_steps}")
    memory = tuple(state.get("memory", []))
    catalog = library.catalog_of(ctx)
    unavailable = state.get("unavailable") or {}
    used = [entry["tool"] for entry in memory]
    mask, notes = feasibility(used, ctx.chainrec_max_steps, domain, catalog, unavailable)
    return PlanView(
        state["user_id"],
        tuple(state["candidates"] or ()),
        state.get("scenario") or "classic",
        memory,
        mask,
        notes,
        ctx.chainrec_max_steps,
        domain,
        catalog,
        library.costs(ctx),
        library.catalog_note,
    )


def _switched_off(notes: dict[str, str], unavailable: dict[str, str]) -> str:
    off = [f"{name} ({why})" for name, why in notes.items() if why.startswith("the dataset has no")]
    off += [f"{name} ({why})" for name, why in unavailable.items() if name in notes]
    return f"; switched off: {', '.join(off)}" if off else ""


def planner_preparer(library: PlannerLibrary) -> PrepareAgent:
    """The planner node's prepare: mask, then one decision (a model call only for an asking planner)."""

    def prepare_planner(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
        domain = state.get("domain") or dict(corpus_of(env).domain)
        view = plan_view(library, state, ctx, domain)
        rule = library.rule_for(view.catalog)
        check_library(library_of(ctx), view.catalog, ctx, rule)
        planner = planner_for(ctx, view.catalog, rule)
        if isinstance(planner, LearnedPlanner):
            planner.bind(view.scenario)
        call = planner_call(planner, view, rule)

        def finish(result: AgentResult) -> dict[str, Any]:
            choice, usage = result.output, result.usage
            usage.record_repairs(call.repairs)
            repaired = next((k for k in [*call.repairs, *usage.repair_kinds] if k.endswith("_action")), None)
            decision = Decision(
                step=view.step,
                action=choice.action,
                reason=choice.reason,
                scores=dict(choice.scores),
                planner=planner.name,
                repaired=repaired,
            )
            why = (
                "forced: budget spent" if forced(view.mask) and view.step >= view.max_steps else choice.reason
            )
            text = f"step {view.step}/{view.max_steps}: {choice.action} — [{usage.source}] {why}"
            if not state.get("domain"):
                text += _switched_off(view.notes, state.get("unavailable") or {})
            update: dict[str, Any] = {
                "mask": dict(view.mask),
                "mask_notes": dict(view.notes),
                "next_action": choice.action,
                "next_node": next((c.node for c in view.catalog if c.name == choice.action), RANK_NODE),
                "decisions": [decision],
                "trace": [post(PLANNER, text)],
                "usage": [usage.as_dict()],
            }
            if not state.get("domain"):
                update["domain"] = domain
                update = with_degraded(update, PLANNER, switched_off(domain), before=False)
            return update

        return AgentCall(call.task, finish, needed=call.needed)

    return prepare_planner


def running_card(spec: ToolSpec, action: str, catalog: Catalog) -> ToolSpec:
    """The card a tool node runs: the run's library card of the chosen `action` when it runs on this
    node (a mined card: its name and description), else the node's own card."""
    return next((card for card in catalog if card.name == action and card.node == spec.node), spec)


def tool_preparer(spec: ToolSpec, library: PlannerLibrary) -> PrepareAgent:
    """The prepare function of one tool node: fetch, then ask the tool agent (or use its fallback)
    under the card the run's library names for the chosen action."""
    fetch = library.fetch[spec.name]
    node_spec = spec

    def prepare(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
        spec = running_card(node_spec, state.get("next_action", ""), library.catalog_of(ctx))
        episode = episode_of(state, ctx, env)
        fetched = fetch(episode)
        step = len(episode.memory) + 1

        def finish(result: AgentResult) -> dict[str, Any]:
            entry = memory_entry(spec, result, fetched, step)
            text = f"[{entry['source']}] {entry['summary']}"
            if fetched.notes:
                text += f" ({'; '.join(fetched.notes)})"
            return {
                "memory": [entry],
                "trace": [post(spec.node, text, entry["confidence"])],
                "usage": [result.usage.as_dict()],
            }

        task = tool_task(spec, fetched, episode)
        return AgentCall(task, finish, needed=fetched.needed, context=answer_context(ctx, fetched))

    return prepare


def rank_preparer(library: PlannerLibrary) -> PrepareAgent:
    """CandidateRank's prepare: the final permutation with rationales, and the episode's details."""

    def prepare_rank(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
        scenario = state.get("scenario") or "classic"
        ranked_with = ranking_context(ctx, library.catalog_of(ctx), scenario)
        return rank_agent(state, ranked_with, env, library.details_extras(state, ctx))

    return prepare_rank


def rank_agent(
    state: ChainRecState, ctx: ChainRecContext, env: Environment, extras: dict[str, Any]
) -> AgentCall:
    """CandidateRank's call; `extras` join the episode's details."""
    call = rank_call(episode_of(state, ctx, env))

    def finish(result: AgentResult) -> dict[str, Any]:
        answer, usage = result.output, result.usage
        ranking = [entry.item_id for entry in answer.ranked]
        details = {**episode_details(state, ctx), **extras}
        text = f"[{usage.source}] top {', '.join(ranking[:3])} after {details['steps']} tools"
        update: dict[str, Any] = {
            "ranking": ranking,
            "rationales": {entry.item_id: entry.reason for entry in answer.ranked},
            "details": details,
            "trace": [post(RANK_NODE, text)],
            "usage": [usage.as_dict()],
        }
        if usage.source != "llm":  # the fusion ranked: its scores are the ranking's
            update["scores"] = call.fused().scores
        return update

    return AgentCall(call.task, finish, context=call.context)


def _planner_blocks(state: ChainRecState) -> bool:
    """The learned planner's next decision reads a checkpoint or embeds new memory lines."""
    return needs_blocking(current_context(), state.get("scenario") or "classic", state.get("memory", []))


def _rank_blocks(state: ChainRecState) -> bool:
    """CandidateRank under the learned planner reads its checkpoint's fusion weights: off the event
    loop while that checkpoint is not loaded yet (the planner's own test; no memory lines to embed)."""
    return needs_blocking(current_context(), state.get("scenario") or "classic", ())


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
        blocking_prepare=_planner_blocks,
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
    rank = agent_node(RANK_NODE, rank_preparer(library), blocking_prepare=_rank_blocks)
    builder.add_node(RANK_NODE, rank)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, PLANNER)
    builder.add_conditional_edges(PLANNER, route_for(library), [*targets, RANK_NODE])
    builder.add_edge(RANK_NODE, END)
    return builder
