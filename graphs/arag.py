"""ARAG (agentic RAG for recommendation) as a blackboard graph.

    START -> validate_input -> recall -> {user_understanding ∥ nli}  (one superstep)
          -> context_summary -> item_ranker -> END

`recall` builds I⁰ (the given candidates, or the catalog neighbours of the user in
retrieve mode; no LLM). The user understanding and NLI agents then run in the same
superstep: NLI is one batched call, or with `Context.nli_mode="per_item"` one `nli_item`
task per item, fanned out with `Send` from the same conditional edge. The context summary
agent reads S_user and the NLI judgments from the blackboard and summarises the accepted
items; the item ranker reads S_user and S_ctx from the blackboard and orders all of I⁰.

Switches: `Context.use_nli` / `Context.use_csa` toggle the agents per run. The ablation
graphs fix them when built (a fixed switch wins over the Context):
`arag_no_nli_graph` (CSA summarises every recalled item, unweighted) and
`arag_no_nli_csa_graph` (user understanding + ranker only).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.types import Send

from agents import arag_board as board
from agents.arag_agents import context_summary_task, nli_item_task, nli_task, user_understanding_task
from agents.arag_ranker import item_ranker_task
from agents.backends import model_label
from agents.base import AgentResult, AgentTask, arun_agent, run_agent, superstep
from agents.usage import AgentUsage
from bench.environment import Environment, get_environment
from graphs.common import VALIDATE_NODE, current_context, dual_node, retrieve_candidates, validate_input
from state.arag_state import AragState, NliItemInput
from state.blackboard import post
from state.context import Context, backend_for
from state.contract import RecInput, RecOutput

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
        k = ctx.recall_k or ctx.top_k
        items = retrieve_candidates(env, state.get("history", []), k)
        note = f"retrieve mode: {len(items)} catalog items nearest the user's history are I⁰"
    return {"recall_set": items, "trace": [post(RECALL, note, float(len(items)))]}


async def arecall_items(state: AragState, config: RunnableConfig) -> dict[str, Any]:
    """`recall_items` on the event loop; the catalog search runs in a worker thread."""
    if state.get("candidates") and not state.get("retrieve_mode"):
        return recall_items(state, config)
    return await asyncio.to_thread(recall_items, state, config)


@dataclass
class Prepared:
    """One agent invocation: its task, what to write back, and whether to call the LLM at all."""

    task: AgentTask
    """The agent task."""
    finish: Callable[[AgentResult], dict[str, Any]]
    """Turns the result into the node's state update."""
    needed: bool = True
    """False when the answer is fixed without asking (e.g. nothing to summarise)."""


def skipped(prepared: Prepared, ctx: Context, config: RunnableConfig) -> AgentResult:
    """The deterministic answer of an agent that had nothing to ask (no call is made)."""
    label = model_label(backend_for(ctx, prepared.task.role))
    return AgentResult(prepared.task.fallback(), AgentUsage(prepared.task.agent, label, superstep(config)))


def agent_node(name: str, prepare: Callable[[Any, Context, Environment], Prepared]) -> Any:
    """A graph node running one agent, with a sync and an async body."""

    def run(state: Any, config: RunnableConfig) -> dict[str, Any]:
        ctx = current_context()
        prepared = prepare(state, ctx, get_environment(ctx.dataset))
        result = run_agent(prepared.task, ctx, config) if prepared.needed else skipped(prepared, ctx, config)
        return prepared.finish(result)

    async def arun(state: Any, config: RunnableConfig) -> dict[str, Any]:
        ctx = current_context()
        prepared = prepare(state, ctx, get_environment(ctx.dataset))
        if prepared.needed:
            return prepared.finish(await arun_agent(prepared.task, ctx, config))
        return prepared.finish(skipped(prepared, ctx, config))

    return dual_node(name, run, arun)


def prepare_user_understanding(state: AragState, ctx: Context, env: Environment) -> Prepared:
    """UUA: S_user from the history."""

    def finish(result: AgentResult) -> dict[str, Any]:
        text = result.output.text()
        return {
            "user_summary": text,
            "trace": [post(UUA, board.tagged(result.usage.source, text))],
            "usage": [result.usage.as_dict()],
        }

    return Prepared(user_understanding_task(env, ctx, state.get("history", [])), finish)


def nli_update(result: AgentResult, judgments: list) -> dict[str, Any]:
    """The NLI agent's state update and blackboard post (JSON scores and justifications)."""
    scores = {j.item_id: j.score for j in judgments}
    reasons = {j.item_id: j.justification for j in judgments}
    mean = sum(scores.values()) / len(scores) if scores else None
    content = board.nli_content(scores, reasons, result.usage.source)
    return {"nli_scores": scores, "trace": [post(NLI, content, mean)], "usage": [result.usage.as_dict()]}


def prepare_nli(state: AragState, ctx: Context, env: Environment) -> Prepared:
    """NLI, batched: every recall item in one call."""
    task = nli_task(env, ctx, state.get("history", []), state["recall_set"])
    return Prepared(task, lambda result: nli_update(result, result.output.judgments))


def prepare_nli_item(state: NliItemInput, ctx: Context, env: Environment) -> Prepared:
    """NLI, per item: the one item this `Send` carries."""
    task = nli_item_task(env, ctx, state["history"], state["item_id"])
    return Prepared(task, lambda result: nli_update(result, [result.output]))


def prepare_context_summary(state: AragState, ctx: Context, env: Environment) -> Prepared:
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

    return Prepared(task, finish, needed=bool(weights))


def prepare_item_ranker(state: AragState, ctx: Context, env: Environment) -> Prepared:
    """IRA: reads S_user, S_ctx (and NLI scores for its fallback) from the blackboard."""
    trace = state.get("trace", [])
    nli = board.read_nli(trace)
    ranker = item_ranker_task(
        env,
        ctx,
        state.get("history", []),
        state["recall_set"],
        board.latest_text(trace, UUA) or "(no user summary)",
        board.latest_text(trace, CSA),
        nli[0] if nli is not None else None,
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

    return Prepared(ranker.task, finish)


recall = dual_node(RECALL, recall_items, arecall_items)
user_understanding = agent_node(UUA, prepare_user_understanding)
nli = agent_node(NLI, prepare_nli)
nli_item = agent_node(NLI_ITEM, prepare_nli_item)
context_summary = agent_node(CSA, prepare_context_summary)
item_ranker = agent_node(IRA, prepare_item_ranker)


def make_routes(use_nli: bool | None, use_csa: bool | None) -> tuple[Callable, Callable]:
    """The two routing functions; a fixed switch wins over the run's Context."""

    def route_after_recall(state: AragState) -> list[str | Send]:
        """UUA always; NLI as one node or one `Send` per item, in the same superstep."""
        ctx = current_context()
        if not (use_nli if use_nli is not None else ctx.use_nli):
            return [UUA]
        if ctx.nli_mode == "batched":
            return [UUA, NLI]
        if ctx.nli_mode == "per_item":
            history = state.get("history", [])
            sends = [
                Send(NLI_ITEM, NliItemInput(user_id=state["user_id"], history=history, item_id=i))
                for i in state["recall_set"]
            ]
            return [UUA, *sends]
        raise ValueError(f"unknown nli_mode {ctx.nli_mode!r}; use 'batched' or 'per_item'")

    def route_to_summary(state: AragState) -> str:
        """The context summary when it is on, else straight to the ranker (never past it)."""
        return CSA if (use_csa if use_csa is not None else current_context().use_csa) else IRA

    return route_after_recall, route_to_summary


def build_arag(use_nli: bool | None = None, use_csa: bool | None = None) -> StateGraph:
    """The uncompiled ARAG graph. `None` switches follow `Context.use_nli` / `use_csa` per
    run; `False` leaves the agent out of the graph, `True` always runs it."""
    route_after_recall, route_to_summary = make_routes(use_nli, use_csa)
    builder = StateGraph(AragState, input_schema=RecInput, output_schema=RecOutput, context_schema=Context)
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(RECALL, recall)
    builder.add_node(UUA, user_understanding)
    builder.add_node(IRA, item_ranker)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, RECALL)
    parallel = [UUA]
    if use_nli is False:
        builder.add_edge(RECALL, UUA)
    else:
        builder.add_node(NLI, nli)
        builder.add_node(NLI_ITEM, nli_item, input_schema=NliItemInput)
        builder.add_conditional_edges(RECALL, route_after_recall, [UUA, NLI, NLI_ITEM])
        parallel += [NLI, NLI_ITEM]
    if use_csa is not False:
        builder.add_node(CSA, context_summary)
        builder.add_edge(CSA, IRA)
    for source in parallel:
        if use_csa is None:
            builder.add_conditional_edges(source, route_to_summary, [CSA, IRA])
        else:
            builder.add_edge(source, CSA if use_csa else IRA)
    builder.add_edge(IRA, END)
    return builder


builder = build_arag()
"""The full ARAG graph, uncompiled (agents toggled per run by the Context)."""

graph = builder.compile(name="arag")
arag_no_nli_graph = build_arag(use_nli=False, use_csa=True).compile(name="arag_no_nli")
arag_no_nli_csa_graph = build_arag(use_nli=False, use_csa=False).compile(name="arag_no_nli_csa")
