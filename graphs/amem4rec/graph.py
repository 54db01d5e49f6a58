"""AMEM4Rec memory-augmented ranking (Algorithm 1, inference) as a LangGraph state machine.

    START -> validate_input -> retrieve_memories -> rank -> END

- retrieve_memories (no LLM): embed the user's recent history (titles and categories, the last
  `amem4rec_recent_items` visible items) and take the top-K (`amem4rec_top_k`) memories of the trained pool
  (`Context.amem4rec_pool`, or the dataset's default pool for this configuration; without a trained
  default pool the ranking runs without memories and the trace says so);
- rank (role "rec"): ONE call ordering every candidate (agents/amem4rec/ranker.py), with the
  similarity fallback. Critical-path depth 1.

The pool is trained by the `amem4rec_train` graph (graphs/amem4rec/train_graph.py) through
`recgraph amem4rec train` or, in the benchmark, the method's `prepare` hook. The ablations
(`amem4rec_no_evolution`, `_no_semantic`, `_no_similarity`) rank the same way over their own pools.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.amem4rec.patterns import PATTERN_NEEDS
from agents.amem4rec.ranker import ranker_call
from agents.amem4rec.retrieval import history_query, ranking_pool, recent_items, retrieve_memories
from agents.base import AgentResult
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.amem4rec.context import Amem4RecContext
from state.amem4rec.state import Amem4RecState
from state.blackboard import post
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from tools.amem4rec.record import decode_vector, encode_vector
from tools.catalog_index import retrieve_candidates
from world.embeddings import EMBEDDING_DIM
from world.environment import Environment, get_environment
from world.shape import degraded_features


def retrieve_step(state: Amem4RecState, config: RunnableConfig) -> dict[str, Any]:
    """Top-K memories for the user's recent history (and the candidates in retrieve mode)."""
    ctx = current_context()
    env = get_environment(ctx.dataset)
    history = state.get("history", [])
    update: dict[str, Any] = {}
    if state.get("retrieve_mode") or not state.get("candidates"):
        update["candidates"] = retrieve_candidates(env, history, ctx.top_k, state.get("user_id"))
    pool, where = ranking_pool(ctx, env)
    query = history_query(env, recent_items(history, ctx.amem4rec_recent_items))
    memories = retrieve_memories(pool, query, ctx.amem4rec_top_k)
    vectors = pool.vectors([m["id"] for m in memories]) if pool is not None else []
    best = memories[0]["score"] if memories else None
    note = f"{len(memories)} memories retrieved from {where}" + ("" if query else "; no visible history")
    update = {
        **update,
        "query": query,
        "memories": memories,
        "memory_vectors": [encode_vector(v) for v in vectors],
        "pool_size": pool.size() if pool is not None else 0,
        "trace": [post("retrieve_memories", note, best)],
    }
    return with_degraded(update, "retrieve_memories", degraded_features(env, PATTERN_NEEDS))


def prepare_rank(state: Amem4RecState, ctx: Amem4RecContext, env: Environment) -> AgentCall:
    """The ranker's one call over every candidate."""
    memories = state.get("memories", [])
    vectors = np.array([decode_vector(v) for v in state.get("memory_vectors", [])]).reshape(-1, EMBEDDING_DIM)
    call = ranker_call(
        env, ctx, state.get("history", []), memories, vectors, state["candidates"],
        user_id=state.get("user_id"), instruction=state.get("instruction"),
    )  # fmt: skip

    def finish(result: AgentResult) -> dict[str, Any]:
        answer, usage = result.output, result.usage
        update: dict[str, Any] = {
            "ranking": answer.ranked_item_ids,
            "reasoning": answer.reasoning,
            "details": {"pool_size": state.get("pool_size", 0), "memories_used": len(memories)},
            "trace": [post("rank", f"[{usage.source}] {answer.reasoning}")],
            "usage": [usage.as_dict()],
        }
        if usage.source != "llm":  # the fallback ranked: its scores are the ranking's
            update["scores"] = call.scores
        return update

    return AgentCall(call.task, finish)


def build_amem4rec() -> StateGraph:
    """The uncompiled AMEM4Rec ranking graph (its ablations differ by pool and Amem4RecContext overrides)."""
    builder = StateGraph(
        Amem4RecState, input_schema=RecInput, output_schema=RecOutput, context_schema=Amem4RecContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node("retrieve_memories", step_node("retrieve_memories", retrieve_step, blocking=True))
    builder.add_node("rank", agent_node("rank", prepare_rank))
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, "retrieve_memories")
    builder.add_edge("retrieve_memories", "rank")
    builder.add_edge("rank", END)
    return builder


builder = build_amem4rec()
"""The AMEM4Rec ranking graph, uncompiled."""
graph = compile_method(builder, "amem4rec")
"""AMEM4Rec: retrieve the top-K pool memories for the recent history, rank in one call."""
