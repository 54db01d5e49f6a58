"""The tool nodes and CandidateRank of the planner graph (builder.py): each tool node fetches, asks its
agent (or answers by its fallback) and appends (a_t, o_t) to the memory; `candidate_rank` orders every
candidate from the memory and writes `details`."""

from __future__ import annotations

from typing import Any

from agents.base import AgentResult
from agents.chainrec.online.candidate_rank import rank_call
from agents.chainrec.online.catalog import Catalog, ToolSpec
from agents.chainrec.online.learned_planner import needs_blocking
from agents.chainrec.online.planners import ranking_context
from agents.chainrec.online.tool_agent import answer_context, memory_entry, tool_task
from graphs.chainrec.episode import episode_details, episode_of
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.nodes import AgentCall, PrepareAgent
from graphs.run_context import current_context
from state.blackboard import post
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState
from world.environment import Environment

RANK_NODE = "candidate_rank"


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


def rank_blocks(state: ChainRecState) -> bool:
    """CandidateRank under the learned planner reads its checkpoint's fusion weights: off the event
    loop while that checkpoint is not loaded yet (the planner's own test; no memory lines to embed)."""
    return needs_blocking(current_context(), state.get("scenario") or "classic", ())
