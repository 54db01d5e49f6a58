"""ARAG (agentic RAG for recommendation) as a blackboard graph.

    START -> validate_input -> recall -> {user_understanding ∥ nli}  (one superstep)
          -> context_summary -> item_ranker -> END

`recall` builds I⁰ (the given candidates, or the catalog neighbours of the user in
retrieve mode; no LLM). The user understanding and NLI agents then run in the same
superstep: NLI is one batched call, or with `Context.arag_nli_mode="per_item"` one `nli_item`
task per item, fanned out with `Send` from the same conditional edge. The context summary
agent reads S_user and the NLI judgments from the blackboard and summarises the accepted
items; the item ranker reads S_user and S_ctx from the blackboard and orders all of I⁰.

Switches: `Context.arag_use_nli` / `Context.arag_use_csa` toggle the agents per run (`route_after_recall`,
`route_to_summary`). The ablation graphs leave the agents out when built:
`arag_no_nli_graph` (CSA summarises every recalled item, unweighted) and
`arag_no_nli_csa_graph` (user understanding + ranker only).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents.arag import board
from agents.arag.agents import context_summary_task, nli_item_task, nli_task, user_understanding_task
from agents.arag.ranker import item_ranker_task
from agents.arag.recall import recall_from_catalog
from agents.arag.signals import NLI_NEEDS, UUA_NEEDS, session_context
from agents.base import AgentResult
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.arag.context import AragContext
from state.arag.state import AragState, NliItemInput
from state.blackboard import post
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from world.environment import Environment, get_environment
from world.shape import degraded_features

RECALL, UUA, NLI, CSA, IRA = (
    board.RECALL,
    board.USER_UNDERSTANDING,
    board.NLI,
    board.CONTEXT_SUMMARY,
    board.ITEM_RANKER,
)
NLI_ITEM = "nli_item"
"""The per-item NLI node (its usage records and posts are the `nli` agent's)."""


def recall_items(state: AragState, config: RunnableConfig) -> dict[str, Any]:
    """I⁰: the given candidates (re-rank mode) or the k catalog items nearest the history."""
    ctx = current_context()
    candidates = state.get("candidates")
    if candidates and not state.get("retrieve_mode"):
        items, note = list(candidates), f"re-rank mode: the {len(candidates)} given candidates are I⁰"
    else:
        env = get_environment(ctx.dataset)
        k = ctx.arag_recall_k or ctx.top_k
        items = recall_from_catalog(env, ctx, state["user_id"], state.get("history", []), k)
        note = f"retrieve mode: {len(items)} catalog items nearest the user context u are I⁰"
    return {"recall_set": items, "trace": [post(RECALL, note, float(len(items)))]}


def recall_may_block(state: AragState) -> bool:
    """Retrieve mode reads the item vectors (from disk on first use) and scans the catalog: run it in a
    worker thread under `ainvoke`."""
    return not (state.get("candidates") and not state.get("retrieve_mode"))


def prepare_user_understanding(state: AragState, ctx: AragContext, env: Environment) -> AgentCall:
    """UUA: S_user from the history."""

    off = degraded_features(env, UUA_NEEDS)
    history = state.get("history", [])
    ctx = session_context(ctx, env, state["user_id"], history)

    def finish(result: AgentResult) -> dict[str, Any]:
        text = result.output.text()
        update = {
            "user_summary": text,
            "trace": [post(UUA, board.tagged(result.usage.source, text))],
            "usage": [result.usage.as_dict()],
        }
        return with_degraded(update, UUA, off)

    return AgentCall(user_understanding_task(env, ctx, history), finish)


def nli_update(result: AgentResult, judgments: list, off: Sequence[str] = ()) -> dict[str, Any]:
    """The NLI agent's state update and blackboard post (JSON scores and justifications), with the
    features it switched off (`off`)."""
    scores = {j.item_id: j.score for j in judgments}
    reasons = {j.item_id: j.justification for j in judgments}
    mean = sum(scores.values()) / len(scores) if scores else None
    content = board.nli_content(scores, reasons, result.usage.source)
    update = {"nli_scores": scores, "trace": [post(NLI, content, mean)], "usage": [result.usage.as_dict()]}
    return with_degraded(update, NLI, off)


def prepare_nli(state: AragState, ctx: AragContext, env: Environment) -> AgentCall:
    """NLI, batched: every recall item in one call."""
    history = state.get("history", [])
    ctx = session_context(ctx, env, state["user_id"], history)
    task = nli_task(env, ctx, history, state["recall_set"])
    off = degraded_features(env, NLI_NEEDS)
    return AgentCall(task, lambda result: nli_update(result, result.output.judgments, off))


def prepare_nli_item(state: NliItemInput, ctx: AragContext, env: Environment) -> AgentCall:
    """NLI, per item: the one item this `Send` carries."""
    ctx = session_context(ctx, env, state["user_id"], state["history"])
    task = nli_item_task(env, ctx, state["history"], state["item_id"])
    off = degraded_features(env, NLI_NEEDS)
    return AgentCall(task, lambda result: nli_update(result, [result.output], off))


def prepare_context_summary(state: AragState, ctx: AragContext, env: Environment) -> AgentCall:
    """CSA: reads S_user and the NLI judgments from the blackboard; summarises I⁺."""
    trace = state.get("trace", [])
    items = state["recall_set"]
    user_summary = board.latest_text(trace, UUA) or "(no user summary)"
    task, weights = context_summary_task(env, ctx, items, user_summary, board.read_nli(trace))

    def finish(result: AgentResult) -> dict[str, Any]:
        summary = result.output.summary
        share = len(weights) / len(items) if items else 0.0
        return {
            "accepted_items": list(weights),
            "context_summary": summary,
            "trace": [post(CSA, board.tagged(result.usage.source, summary), share)],
            "usage": [result.usage.as_dict()],
        }

    return AgentCall(task, finish, needed=bool(weights))


def prepare_item_ranker(state: AragState, ctx: AragContext, env: Environment) -> AgentCall:
    """IRA: reads S_user, S_ctx (and NLI scores for its fallback) from the blackboard."""
    trace = state.get("trace", [])
    nli = board.read_nli(trace)
    history = state.get("history", [])
    ctx = session_context(ctx, env, state["user_id"], history)
    ranker = item_ranker_task(
        env,
        ctx,
        history,
        state["recall_set"],
        board.latest_text(trace, UUA) or "(no user summary)",
        board.latest_text(trace, CSA),
        nli[0] if nli is not None else None,
        user_id=state["user_id"],
        instruction=state.get("instruction"),
    )

    def finish(result: AgentResult) -> dict[str, Any]:
        answer = result.output
        update: dict[str, Any] = {
            "ranking": answer.ranking,
            "rationales": {r.item_id: r.reason for r in answer.rationales},
            "trace": [post(IRA, board.tagged(result.usage.source, answer.explanation))],
            "usage": [result.usage.as_dict()],
        }
        if result.usage.source != "llm":  # the fusion ranked: its scores are the ranking's
            update["scores"] = ranker.fused
        return update

    return AgentCall(ranker.task, finish)


recall = step_node(RECALL, recall_items, blocking=recall_may_block)
user_understanding = agent_node(UUA, prepare_user_understanding)
nli_node = agent_node(NLI, prepare_nli)
nli_item = agent_node(NLI_ITEM, prepare_nli_item)
context_summary = agent_node(CSA, prepare_context_summary)
item_ranker = agent_node(IRA, prepare_item_ranker)


def route_after_recall(state: AragState) -> Sequence[Literal["user_understanding", "nli"] | Send]:
    """UUA always; NLI (when `Context.arag_use_nli`) as one node or one `Send` per item, in the same
    superstep as UUA."""
    ctx = current_context()
    if not ctx.arag_use_nli:
        return [UUA]
    if ctx.arag_nli_mode == "batched":
        return [UUA, NLI]
    if ctx.arag_nli_mode == "per_item":
        history = state.get("history", [])
        sends = [
            Send(NLI_ITEM, NliItemInput(user_id=state["user_id"], history=history, item_id=i))
            for i in state["recall_set"]
        ]
        return [UUA, *sends]
    raise ValueError(f"unknown nli_mode {ctx.arag_nli_mode!r}; use 'batched' or 'per_item'")


def route_to_summary(state: AragState) -> Literal["context_summary", "item_ranker"]:
    """The context summary when `Context.arag_use_csa` is on, else straight to the ranker."""
    return CSA if current_context().arag_use_csa else IRA


def build_arag(nli: bool = True, csa: bool = True) -> StateGraph:
    """The uncompiled ARAG graph. An agent left out (`False`) is not in the graph at all; one that
    is in follows `Context.arag_use_nli` / `use_csa` per run."""
    builder = StateGraph(
        AragState, input_schema=RecInput, output_schema=RecOutput, context_schema=AragContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(RECALL, recall)
    builder.add_node(UUA, user_understanding)
    builder.add_node(IRA, item_ranker)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, RECALL)
    parallel = [UUA]
    if nli:
        builder.add_node(NLI, nli_node)
        builder.add_node(NLI_ITEM, nli_item, input_schema=NliItemInput)
        builder.add_conditional_edges(RECALL, route_after_recall, [UUA, NLI, NLI_ITEM])
        parallel += [NLI, NLI_ITEM]
    else:
        builder.add_edge(RECALL, UUA)
    for source in parallel:
        if csa:
            builder.add_conditional_edges(source, route_to_summary, [CSA, IRA])
        else:
            builder.add_edge(source, IRA)
    if csa:
        builder.add_node(CSA, context_summary)
        builder.add_edge(CSA, IRA)
    builder.add_edge(IRA, END)
    return builder


builder = build_arag()
"""The full ARAG graph, uncompiled (agents toggled per run by the AragContext)."""

graph = compile_method(builder, "arag")
arag_no_nli_graph = compile_method(build_arag(nli=False), "arag_no_nli")
"""Ablation w/o NLI: the context summary covers every recalled item, unweighted."""
arag_no_nli_csa_graph = compile_method(build_arag(nli=False, csa=False), "arag_no_nli_csa")
"""Ablation w/o NLI and CSA: user understanding and the ranker only."""
