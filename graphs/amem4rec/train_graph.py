"""AMEM4Rec training (Algorithm 1) as a LangGraph state machine: one invocation = one window.

    START -> validate_window -> extract -(route_extraction)-> similarity_validator | commit
    similarity_validator -(route_policy: Eq. 7)-> store_only | update_and_store | update_only
    store_only -> commit
    update_and_store | update_only -> semantic_validator -(route_links)-> evolve | commit
    evolve -> commit -> END

- validate_window: the window is `amem4rec_window` consecutive items of the user's training history;
- extract (role "mem"): p = {behavior_explanation, pattern_description}, no item names in the
  behaviour; under the heuristic backend the template pattern; when a model backend's call FAILED
  (after its retries) the window is `skipped`: straight to commit, which stores nothing; read
  instead from the shared extraction stage when the driver attached one (graphs/amem4rec/extraction.py);
- similarity_validator (no LLM): e = Encode(p), top-|L| pool memories by cosine, Eq. 7;
- store_only / update_and_store / update_only: the policy's branches (doUpdate, doStore);
- semantic_validator (role "mem"): which offered memories (s >= tau_low) to link, or "store
  separately" (the model's should_link false): nothing evolves and the new memory is stored even
  under UPDATE only;
- evolve (role "mem"): ONE call rewriting every linked memory;
- commit: the window's plan (new memory if doStore or stored separately, rewrites with the versions
  they read) is applied to the pool (`amem4rec_commit_mode="apply"`) or returned for the training
  driver to apply in window order (`"propose"`).
At most three LLM calls per window. Invoke with `{"user_id": ..., "start": ...}`.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.amem4rec.evolve import evolve_task
from agents.amem4rec.extract import extraction_request, extraction_task, replayed
from agents.amem4rec.link import link_task
from agents.amem4rec.policy import ACTIONS, SKIPPED
from agents.amem4rec.retrieval import training_pool
from agents.amem4rec.similarity import validate_similarity
from agents.amem4rec.windows import memory_id, window_items, window_key
from agents.base import AgentResult
from graphs.common import service_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.amem4rec.context import Amem4RecContext
from state.amem4rec.schemas import PatternExtraction
from state.amem4rec.state import WindowInput, WindowOutput, WindowState
from state.blackboard import post
from tools.amem4rec.extraction_stage import attached
from tools.amem4rec.record import encode_vector
from world.environment import Environment, get_environment
from world.errors import RecgraphError

COMMIT_MODES = ("apply", "propose")
"""Values of `Context.amem4rec_commit_mode`."""
USAGE_KEPT = (
    "agent",
    "model",
    "step",
    "calls",
    "input_tokens",
    "output_tokens",
    "tokens_estimated",
    "cost_usd",
    "llm_seconds",
    "repairs",
    "repair_kinds",
    "errors",
    "source",
    "fallback",
)
"""Usage fields a commit plan keeps (call intervals are dropped)."""


def check_window(state: WindowState, config: RunnableConfig) -> dict[str, Any]:
    """Check the request and cut the window out of the user's training history."""
    request = service_input(WindowInput, state, "WindowInput")
    ctx = current_context()
    if ctx.amem4rec_commit_mode not in COMMIT_MODES:
        raise RecgraphError(
            f"amem4rec_commit_mode must be apply or propose, got {ctx.amem4rec_commit_mode!r}"
        )
    env = get_environment(ctx.dataset)
    items = window_items(env, request.user_id, request.start, ctx.amem4rec_window)
    key = window_key(request.user_id, request.start)
    note = f"window {key}: {len(items)} training items {', '.join(items)}"
    return {
        "user_id": request.user_id,
        "start": request.start,
        "items": items,
        "window_key": key,
        "trace": [post("validate_window", note)],
    }


def prepare_extract(state: WindowState, ctx: Amem4RecContext, env: Environment) -> AgentCall:
    """Memory creation: the extractor's call for this window, or its answer in an attached stage."""
    task, note = extraction_task(env, state["items"], ctx.amem4rec_memory_chars)
    stage = attached(ctx.amem4rec_pool) if "window_key" in state else None
    stored = stage.get(state["window_key"], extraction_request(task, ctx)) if stage else None
    if stored is not None:
        kept = PatternExtraction(**stored["memory"]) if stored.get("memory") else None
        shared = replace(task, fallback=lambda: kept or task.fallback())
        return AgentCall(shared, partial(replayed, stored), needed=False)

    def finish(result: AgentResult) -> dict[str, Any]:
        answer, source = result.output, result.usage.source
        if source == "fallback":  # the model failed: a template is no memory of this window
            text = "[fallback] the extraction call failed: this window stores nothing"
            return {
                "extraction_failed": True,
                "trace": [post("extract", text)],
                "usage": [result.usage.as_dict()],
            }
        how = f" ({note})" if source != "llm" else ""
        found = f"behaviour: {answer.behavior_explanation} | pattern: {answer.pattern_description}"
        text = f"[{source}]{how} {found}"
        return {
            "memory": answer.model_dump(),
            "trace": [post("extract", text)],
            "usage": [result.usage.as_dict()],
        }

    return AgentCall(task, finish)


def route_extraction(state: WindowState) -> Literal["similarity_validator", "commit"]:
    """A window whose extraction failed goes straight to the commit (which stores nothing)."""
    return "commit" if state.get("extraction_failed") else "similarity_validator"


def similarity_step(state: WindowState, config: RunnableConfig) -> dict[str, Any]:
    """Encode the new pattern, compare it with its top-|L| pool memories, decide with Eq. 7."""
    ctx = current_context()
    env = get_environment(ctx.dataset)
    memory = state["memory"]
    verdict = validate_similarity(
        training_pool(ctx, env), memory["behavior_explanation"], memory["pattern_description"], ctx
    )
    decision = verdict.decision
    stats = {
        "s_max": decision.s_max,
        "p_high": decision.p_high,
        "p_medium": decision.p_medium,
        "p_low": decision.p_low,
        "k": decision.k,
        "row": decision.row,
        "policy": decision.action,
    }
    return {
        "embedding": encode_vector(verdict.vector),
        "neighbours": verdict.neighbours,
        "stats": stats,
        "action": verdict.action,
        "offered": verdict.offered,
        "trace": [post("similarity_validator", verdict.note, decision.s_max)],
    }


def route_policy(state: WindowState) -> Literal["store_only", "update_and_store", "update_only"]:
    """Eq. 7's decision, taken by `similarity_validator`: one branch node per strategy."""
    action = state["action"]
    if action not in ACTIONS:
        raise RecgraphError(f"unknown memory strategy {action!r}")
    return action


def branch_node(action: str) -> Any:
    """The node of one policy branch: records doUpdate / doStore on the blackboard."""
    update, store = action != "store_only", action != "update_only"

    def body(state: WindowState, config: RunnableConfig) -> dict[str, Any]:
        offered = len(state.get("offered", []))
        note = f"doUpdate={update}, doStore={store}" + (
            f"; {offered} memories offered for linking" if update else ""
        )
        return {"trace": [post(action, note)]}

    return step_node(action, body)


def prepare_link(state: WindowState, ctx: Amem4RecContext, env: Environment) -> AgentCall:
    """The semantic validator: which offered memories to link (skipped without offers or when off)."""
    offered = state.get("offered", [])
    task = link_task(state["memory"], state["neighbours"], offered, ctx.amem4rec_tau_low)
    ask = ctx.amem4rec_semantic and bool(offered)

    def finish(result: AgentResult) -> dict[str, Any]:
        answer, source = result.output, result.usage.source
        why = answer.reasoning if ask else "semantic validator off: every offered memory is linked"
        # Only the model's own answer can choose to store separately; its fallback links them all.
        separately = source == "llm" and not answer.should_link
        outcome = "store separately" if separately else f"linked {len(answer.linked_thought_ids)}"
        note = f"[{source}] {outcome} of {len(offered)}: {why}"
        return {
            "linked": answer.linked_thought_ids,
            "store_separately": separately,
            "link_reasoning": why,
            "trace": [post("semantic_validator", note)],
            "usage": [result.usage.as_dict()],
        }

    return AgentCall(task, finish, needed=ask)


def route_links(state: WindowState) -> Literal["evolve", "commit"]:
    """Evolve when something was linked, else straight to the commit."""
    return "evolve" if state.get("linked") else "commit"


def prepare_evolve(state: WindowState, ctx: Amem4RecContext, env: Environment) -> AgentCall:
    """Memory evolution: one call rewriting every linked memory."""
    neighbours = state["neighbours"]
    versions = {n["id"]: n["version"] for n in neighbours}
    task = evolve_task(state["memory"], neighbours, state["linked"], ctx.amem4rec_memory_chars)

    def finish(result: AgentResult) -> dict[str, Any]:
        rewrites = [{**u.model_dump(), "base_version": versions[u.thought_id]} for u in result.output.updates]
        note = f"[{result.usage.source}] rewrote {len(rewrites)} of {len(state['linked'])} linked memories"
        return {"rewrites": rewrites, "trace": [post("evolve", note)], "usage": [result.usage.as_dict()]}

    return AgentCall(task, finish)


def commit_plan(state: WindowState) -> dict[str, Any]:
    """The window's commit plan: what the pool must do, and what the window cost. A skipped window
    (failed extraction) stores and evolves nothing; a "store separately" answer stores the new
    memory whatever Eq. 7 chose."""
    user, start = state["user_id"], state["start"]
    plan = {
        "window_key": state["window_key"],
        "user_id": user,
        "start": start,
        "items": state["items"],
        "usage": [{k: r[k] for k in USAGE_KEPT if k in r} for r in state.get("usage", [])],
    }
    if state.get("extraction_failed"):
        nothing = {"store": False, "memory": None, "rewrites": [], "linked": [], "stats": {}}
        return plan | {"action": SKIPPED, **nothing}
    return plan | {
        "action": state["action"],
        "store": state["action"] != "update_only" or bool(state.get("store_separately")),
        "memory": {**state["memory"], "id": memory_id(user, start), "embedding": state["embedding"]},
        "rewrites": state.get("rewrites", []),
        "linked": state.get("linked", []),
        "stats": state["stats"],
    }


def commit_step(state: WindowState, config: RunnableConfig) -> dict[str, Any]:
    """Apply the plan to the pool, or return it (propose mode) for the driver to apply in order."""
    ctx = current_context()
    plan = commit_plan(state)
    if ctx.amem4rec_commit_mode == "propose":
        status, note = "proposed", "plan returned for the training driver"
    else:
        outcome = training_pool(ctx, get_environment(ctx.dataset)).apply(plan)
        status = outcome["status"]
        note = (
            f"stored {outcome['stored'] or 'nothing'}; evolved {len(outcome['evolved'])}"
            f" ({len(outcome['merged'])} merged with a concurrent evolution)"
        )
    return {"plan": plan, "status": status, "trace": [post("commit", f"{status}: {note}")]}


def build_amem4rec_train() -> StateGraph:
    """The uncompiled training graph."""
    builder = StateGraph(
        WindowState, input_schema=WindowInput, output_schema=WindowOutput, context_schema=Amem4RecContext
    )
    builder.add_node("validate_window", step_node("validate_window", check_window))
    builder.add_node("extract", agent_node("extract", prepare_extract))
    builder.add_node(
        "similarity_validator", step_node("similarity_validator", similarity_step, blocking=True)
    )
    for action in ACTIONS:
        builder.add_node(action, branch_node(action))
    builder.add_node("semantic_validator", agent_node("semantic_validator", prepare_link))
    builder.add_node("evolve", agent_node("evolve", prepare_evolve))
    builder.add_node("commit", step_node("commit", commit_step, blocking=True))
    builder.add_edge(START, "validate_window")
    builder.add_edge("validate_window", "extract")
    builder.add_conditional_edges("extract", route_extraction, ["similarity_validator", "commit"])
    builder.add_conditional_edges("similarity_validator", route_policy, list(ACTIONS))
    builder.add_edge("store_only", "commit")
    builder.add_edge("update_and_store", "semantic_validator")
    builder.add_edge("update_only", "semantic_validator")
    builder.add_conditional_edges("semantic_validator", route_links, ["evolve", "commit"])
    builder.add_edge("evolve", "commit")
    builder.add_edge("commit", END)
    return builder


builder = build_amem4rec_train()
"""The training graph, uncompiled."""
graph = compile_method(builder, "amem4rec_train")
"""AMEM4Rec training: one window through extract, the two validators, evolution and commit."""
