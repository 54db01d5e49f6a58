"""LLM baselines as graphs on the shared contract: vanilla_llm, recency_llm, vanilla_rag.

Each graph is `validate_input -> <name>_ranker -> END`; the ranker is one agent (an
LLM policy with validation, repair, retries and a documented fallback).
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from agents.base import AgentResult
from agents.baselines.llm import RANKERS, PromptedRanker
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node
from graphs.run_context import compile_method
from state.base_state import BaseState
from state.baselines.context import BaselinesContext
from state.blackboard import post
from state.contract import RecInput, RecOutput
from tools.catalog_index import retrieve_candidates
from world.environment import Environment


def make_ranker_node(ranker: PromptedRanker) -> Any:
    """The agent node of one LLM baseline."""

    def prepare(state: BaseState, ctx: BaselinesContext, env: Environment) -> AgentCall:
        history = state.get("history", [])
        extra: dict[str, Any] = {}
        candidates = state.get("candidates")
        if state.get("retrieve_mode") or not candidates:
            candidates = retrieve_candidates(env, history, ctx.top_k, state.get("user_id"))
            extra["candidates"] = candidates
        return AgentCall(ranker.task(
            env, ctx, history, candidates, user_id=state.get("user_id"), instruction=state.get("instruction")
        ), lambda result: ranked(result, extra))

    def ranked(result: AgentResult, extra: dict[str, Any]) -> dict[str, Any]:
        answer, usage = result.output, result.usage
        note = f"[{usage.source}] {answer.reason}".strip()
        return {
            **extra,
            "ranking": answer.ranking,
            "trace": [post(ranker.agent, note)],
            "usage": [usage.as_dict()],
        }

    return agent_node(ranker.agent, prepare, blocking_prepare=retrieves)


def retrieves(state: BaseState) -> bool:
    """Retrieve mode (no candidates) searches the Chroma index on disk: prepare off the event loop."""
    return bool(state.get("retrieve_mode") or not state.get("candidates"))


def build_llm_baseline(name: str) -> StateGraph:
    """The uncompiled graph of LLM baseline `name`."""
    ranker = RANKERS[name]
    builder = StateGraph(
        BaseState, input_schema=RecInput, output_schema=RecOutput, context_schema=BaselinesContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(ranker.agent, make_ranker_node(ranker))
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, ranker.agent)
    builder.add_edge(ranker.agent, END)
    return builder


builders: dict[str, StateGraph] = {name: build_llm_baseline(name) for name in RANKERS}
"""Uncompiled graphs by LLM baseline name."""

vanilla_llm_graph = compile_method(builders["vanilla_llm"], "vanilla_llm")
recency_llm_graph = compile_method(builders["recency_llm"], "recency_llm")
vanilla_rag_graph = compile_method(builders["vanilla_rag"], "vanilla_rag")
llmrank_sequential_graph = compile_method(builders["llmrank_sequential"], "llmrank_sequential")
llmrank_recency_graph = compile_method(builders["llmrank_recency"], "llmrank_recency")
llmrank_icl_graph = compile_method(builders["llmrank_icl"], "llmrank_icl")
