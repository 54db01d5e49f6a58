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

The learned planner reads its checkpoint once per process and embeds each new memory line with
MiniLM; `_planner_blocks` sends the planner node's preparation to a worker thread whenever a
decision would do either, so `langgraph dev` never sees it block. Without a checkpoint it refuses in
one line saying how to train one; `details.planner_used` names the planner(s) that decided.
"""

from __future__ import annotations

import weakref
from typing import Any, Literal, get_args

from langgraph.graph import END, START, StateGraph

from agents.base import AgentResult
from agents.chainrec.online.candidate_rank import rank_call
from agents.chainrec.online.catalog import BY_NAME, CANDIDATE_RANK, TOOLS, ToolSpec
from agents.chainrec.online.degraded import switched_off
from agents.chainrec.online.learned_planner import LearnedPlanner, needs_blocking
from agents.chainrec.online.library import LIBRARY
from agents.chainrec.online.mask import feasibility, forced
from agents.chainrec.online.planners import RulePlanner, planner_for
from agents.chainrec.online.planning import PlanView, planner_call
from agents.chainrec.online.tool_agent import Episode, answer_context, memory_entry, tool_task
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, FirstStep, PrepareAgent, agent_node
from graphs.run_context import compile_method, current_context
from state.blackboard import post
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState, Decision
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from tools.catalog_index import retrieve_candidates
from tools.chainrec.episode_corpus import corpus_of
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import Environment, get_environment
from world.errors import RecgraphError

PLANNER = "planner"
RANK_NODE = BY_NAME[CANDIDATE_RANK].node
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

_warmed: weakref.WeakSet[Environment] = weakref.WeakSet()


def route_planner(state: ChainRecState) -> Route:
    """The node of the planner's chosen action: a feasible tool's node, otherwise candidate_rank."""
    action = state.get("next_action", CANDIDATE_RANK)
    if action != CANDIDATE_RANK and action in NODE_OF and state.get("mask", {}).get(action, False):
        return NODE_OF[action]  # type: ignore[return-value]
    return "candidate_rank"


def episode_of(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> Episode:
    """The episode a tool or CandidateRank works in."""
    scope = EpisodeScope(env, state["user_id"], state.get("scenario") or "classic")
    return Episode(scope, tuple(state["candidates"] or ()), tuple(state.get("memory", [])), ctx)


def first_visit(state: ChainRecState) -> dict[str, Any]:
    """Load what the episode's tools need (may touch disk: run off the event loop) and, in retrieve
    mode, the candidates (the catalog items nearest the visible history)."""
    ctx = current_context()
    env = get_environment(ctx.dataset)
    if env not in _warmed:
        corpus_of(env)
        env.item_vectors()
        _warmed.add(env)
    if state.get("retrieve_mode") or not state.get("candidates"):
        found = retrieve_candidates(env, state.get("history", []), ctx.top_k)
        return {"candidates": found, "trace": [post(PLANNER, f"retrieve mode: {len(found)} catalog items")]}
    return {}


def _first_visit_blocks(state: ChainRecState) -> bool:
    env = get_environment(current_context().dataset)
    return env not in _warmed or bool(state.get("retrieve_mode") or not state.get("candidates"))


def plan_view(state: ChainRecState, ctx: ChainRecContext, domain: dict[str, bool]) -> PlanView:
    """S_t with the mask computed now (the planner never sees a stale mask)."""
    if ctx.chainrec_max_steps < 1:
        raise RecgraphError(f"chainrec_max_steps must be at least 1, got {ctx.chainrec_max_steps}")
    memory = tuple(state.get("memory", []))
    mask, notes = feasibility([entry["tool"] for entry in memory], ctx.chainrec_max_steps, domain)
    return PlanView(
        state["user_id"],
        tuple(state["candidates"] or ()),
        state.get("scenario") or "classic",
        memory,
        mask,
        notes,
        ctx.chainrec_max_steps,
        domain,
    )


def _switched_off(notes: dict[str, str]) -> str:
    off = [f"{name} ({why})" for name, why in notes.items() if why.startswith("the dataset has no")]
    return f"; switched off: {', '.join(off)}" if off else ""


def prepare_planner(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
    """The planner node: mask, then one decision (a model call only for an asking planner)."""
    domain = state.get("domain") or dict(corpus_of(env).domain)
    view = plan_view(state, ctx, domain)
    planner = planner_for(ctx)
    if isinstance(planner, LearnedPlanner):
        planner.bind(view.scenario)
    call = planner_call(planner, view, RulePlanner())

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
        why = "forced: budget spent" if forced(view.mask) and view.step >= view.max_steps else choice.reason
        text = f"step {view.step}/{view.max_steps}: {choice.action} — [{usage.source}] {why}"
        if not state.get("domain"):
            text += _switched_off(view.notes)
        update: dict[str, Any] = {
            "mask": dict(view.mask),
            "mask_notes": dict(view.notes),
            "next_action": choice.action,
            "decisions": [decision],
            "trace": [post(PLANNER, text)],
            "usage": [usage.as_dict()],
        }
        if not state.get("domain"):
            update["domain"] = domain
            update = with_degraded(update, PLANNER, switched_off(domain), before=False)
        return update

    return AgentCall(call.task, finish, needed=call.needed)


def tool_preparer(spec: ToolSpec) -> PrepareAgent:
    """The prepare function of one tool node: fetch, then ask the tool agent (or use its fallback)."""
    fetch = LIBRARY[spec.name]

    def prepare(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
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


def episode_details(state: ChainRecState, ctx: ChainRecContext) -> dict[str, Any]:
    """Per-user figures for the benchmark: steps, tools, the trajectory and how the planning went."""
    memory = state.get("memory", [])
    decisions = state.get("decisions", [])
    return {
        "steps": len(memory),
        "tools": [entry["tool"] for entry in memory],
        "trajectory": [
            {
                "step": entry["step"],
                "tool": entry["tool"],
                "confidence": entry["confidence"],
                "summary": entry["summary"],
                "source": entry["source"],
            }
            for entry in memory
        ],
        "planner": ctx.chainrec_planner,
        "planner_used": sorted({d["planner"] for d in decisions}),
        "planner_repairs": sum(1 for d in decisions if d["repaired"]),
        "budget_stops": int(len(memory) >= ctx.chainrec_max_steps),
    }


def prepare_rank(state: ChainRecState, ctx: ChainRecContext, env: Environment) -> AgentCall:
    """CandidateRank: the final permutation with rationales, and the episode's details."""
    call = rank_call(episode_of(state, ctx, env))

    def finish(result: AgentResult) -> dict[str, Any]:
        answer, usage = result.output, result.usage
        ranking = [entry.item_id for entry in answer.ranked]
        details = episode_details(state, ctx)
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


FIRST_VISIT = FirstStep(
    needed=lambda state: not state.get("domain"), run=first_visit, blocks=_first_visit_blocks
)
"""The episode's first planner visit loads the tools' corpus (and retrieves candidates when asked)."""

planner = agent_node(PLANNER, prepare_planner, blocking_prepare=_planner_blocks, first_step=FIRST_VISIT)
tool_nodes = {spec.name: agent_node(spec.node, tool_preparer(spec)) for spec in TOOLS if spec.name in LIBRARY}
candidate_rank = agent_node(RANK_NODE, prepare_rank)


def build_chainrec() -> StateGraph:
    """The uncompiled ChainRec graph (its variants are ChainRecContext overrides in `graphs.registry`)."""
    builder = StateGraph(
        ChainRecState, input_schema=RecInput, output_schema=RecOutput, context_schema=ChainRecContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(PLANNER, planner)
    for name, node in tool_nodes.items():
        builder.add_node(NODE_OF[name], node)
        builder.add_edge(NODE_OF[name], PLANNER)
    builder.add_node(RANK_NODE, candidate_rank)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, PLANNER)
    builder.add_conditional_edges(PLANNER, route_planner, list(get_args(Route)))
    builder.add_edge(RANK_NODE, END)
    return builder


builder = build_chainrec()
"""The ChainRec graph, uncompiled."""
graph = compile_method(builder, "chainrec")
"""ChainRec: planner ⇄ tools, then CandidateRank. `chainrec_fixed` (every feasible tool in catalog
order) and `chainrec_llm_planner` (zero-shot LLM planner) are this graph with ChainRecContext overrides."""
