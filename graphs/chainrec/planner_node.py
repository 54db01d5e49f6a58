"""The planner node of the planner graph (builder.py): the episode's first visit (the corpus, retrieve
mode, the tools that cannot run), S_t with the feasibility mask computed before every decision, and
one decision of the planner `Context.chainrec_planner` names."""

from __future__ import annotations

import weakref
from typing import Any

from agents.base import AgentResult
from agents.chainrec.online.degraded import switched_off
from agents.chainrec.online.learned_planner import LearnedPlanner, needs_blocking
from agents.chainrec.online.library_file import library_loaded, library_of
from agents.chainrec.online.mask import feasibility, forced
from agents.chainrec.online.planners import check_library, planner_for
from agents.chainrec.online.planning import PlanView, planner_call
from graphs.chainrec.library_spec import PlannerLibrary
from graphs.chainrec.tool_nodes import RANK_NODE
from graphs.nodes import AgentCall, FirstStep, PrepareAgent
from graphs.run_context import current_context
from state.blackboard import post
from state.chainrec.context import ChainRecContext
from state.chainrec.state import ChainRecState, Decision
from state.degraded import with_degraded
from tools.catalog_index import retrieve_candidates
from tools.chainrec.episode_corpus import corpus_of
from world.environment import Environment, get_environment
from world.errors import RecgraphError

PLANNER = "planner"

_warmed: weakref.WeakSet[Environment] = weakref.WeakSet()


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


def planner_blocks(state: ChainRecState) -> bool:
    """The learned planner's next decision reads a checkpoint or embeds new memory lines."""
    return needs_blocking(current_context(), state.get("scenario") or "classic", state.get("memory", []))
