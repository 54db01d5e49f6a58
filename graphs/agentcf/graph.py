"""AgentCF's ranking graph: the user agent ranks the candidates from its memory and theirs.

    START -> validate_input -> item_agents -(route_variant)-> retrieve_memories | user_agent
    retrieve_memories -> user_agent -> END

- item_agents: the user agent's memory and each candidate's item agent memory, from the
  `agentcf_memory` file training wrote (an agent training never touched keeps its initial memory;
  an empty `agentcf_memory` means an untrained model, said on the blackboard); in retrieve mode (no
  candidates) the catalog's nearest items to the history are the candidates;
- retrieve_memories (the retrieval variant): the user's past self-descriptions closest to the
  candidates;
- user_agent (role "rec"): one ranking call (agents/agentcf/rank.py), repaired into a permutation of
  the candidates, with its deterministic fallback.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.agentcf.rank import rank_task
from agents.agentcf.recall import item_memories, retrieve_past, user_memory
from agents.base import AgentResult
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.agentcf.context import AgentCFContext
from state.agentcf.state import AgentCFState
from state.blackboard import post
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from tools.agentcf.store import loaded, read_only
from tools.catalog_index import retrieve_candidates
from world.environment import Environment, get_environment
from world.shape import degraded_features

NEEDS = {"category_terms": "categories"}
"""Dataset fields the heuristic memories read: without categories, items' title words stand in."""


def gather(state: AgentCFState, config: RunnableConfig) -> dict[str, Any]:
    """`item_agents`: the user's and the candidates' memories (module docstring)."""
    ctx = current_context()
    assert isinstance(ctx, AgentCFContext)
    env = get_environment(ctx.dataset)
    extra: dict[str, Any] = {}
    candidates = state.get("candidates")
    if state.get("retrieve_mode") or not candidates:
        candidates = retrieve_candidates(env, state.get("history", []), ctx.top_k, state.get("user_id"))
        extra["candidates"] = candidates
    stored = read_only(ctx.agentcf_memory)
    trained_user = state["user_id"] in stored.users
    trained_items = sum(1 for c in candidates if c in stored.items)
    if not ctx.agentcf_memory:
        note = "no agentcf_memory: every agent has its initial memory (recgraph bench trains them)"
    else:
        note = f"user agent {'trained' if trained_user else 'untrained'}; {trained_items} of "
        note += f"{len(candidates)} candidate agents trained"
    update = {
        **extra,
        "user_memory": user_memory(stored, state["user_id"]),
        "item_memories": item_memories(env, stored, candidates),
        "details": {"trained_user": int(trained_user), "trained_candidates": trained_items},
        "trace": [post("item_agents", note)],
    }
    return with_degraded(update, "item_agents", degraded_features(env, NEEDS))


def gather_blocks(state: AgentCFState) -> bool:
    """Reading the memories file (first time) or the catalog index (retrieve mode) touches disk."""
    ctx = current_context()
    retrieve = bool(state.get("retrieve_mode") or not state.get("candidates"))
    return retrieve or not loaded(getattr(ctx, "agentcf_memory", ""))


def route_variant(state: AgentCFState) -> Literal["retrieve_memories", "user_agent"]:
    """The retrieval variant looks up past self-descriptions first."""
    return "retrieve_memories" if current_context().agentcf_ranking == "retrieval" else "user_agent"


def retrieve(state: AgentCFState, config: RunnableConfig) -> dict[str, Any]:
    """`retrieve_memories`: the past self-descriptions closest to the candidates."""
    ctx = current_context()
    env = get_environment(ctx.dataset)
    stored = read_only(ctx.agentcf_memory)
    past = retrieve_past(env, stored, state["user_id"], state["candidates"], ctx.agentcf_retrieved)
    note = f"{len(past)} past self-descriptions"
    return {"past_memories": past, "trace": [post("retrieve_memories", note)]}


def prepare_rank(state: AgentCFState, ctx: Any, env: Environment) -> AgentCall:
    """`user_agent`: the ranking call."""
    candidates = state["candidates"]
    task, scores = rank_task(
        env, ctx, state["user_memory"], state["item_memories"], candidates,
        state.get("history", []), state.get("past_memories", []),
        state.get("user_id"), state.get("instruction"),
    )  # fmt: skip

    def finish(result: AgentResult) -> dict[str, Any]:
        answer = result.output
        return {
            "ranking": answer.ranking,
            "scores": scores,
            "trace": [post("user_agent", f"[{result.usage.source}] {answer.reason}".strip())],
            "usage": [result.usage.as_dict()],
        }

    return AgentCall(task, finish)


def build() -> StateGraph:
    """The uncompiled ranking graph (shared by the three ranking variants)."""
    builder = StateGraph(
        AgentCFState, input_schema=RecInput, output_schema=RecOutput, context_schema=AgentCFContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    first = step_node("item_agents", gather, blocking=gather_blocks, item_vectors=False)
    builder.add_node("item_agents", first)
    builder.add_node("retrieve_memories", step_node("retrieve_memories", retrieve, item_vectors=False))
    builder.add_node("user_agent", agent_node("user_agent", prepare_rank, item_vectors=False))
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, "item_agents")
    builder.add_conditional_edges("item_agents", route_variant, ["retrieve_memories", "user_agent"])
    builder.add_edge("retrieve_memories", "user_agent")
    builder.add_edge("user_agent", END)
    return builder


builder = build()
"""The ranking graph, uncompiled."""
graph = compile_method(builder, "agentcf")
