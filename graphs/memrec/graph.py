"""MemRec (collaborative memory-augmented agentic recommender) as a LangGraph state machine.

    START -> validate_input -> curate -> synthesise -> rerank -> END

- curate (no LLM): candidate-aware features over the 1- and 2-hop neighbourhood, scored with the
  domain rule set, top `memrec_k` with user/item floors (agents/memrec/curation.py);
- synthesise (LM_Mem, role "mem"): N_f preference facets + support edges within tau tokens
  (agents/memrec/synthesis.py);
- rerank (LLM_Rec, role "rec"): per-candidate score and rationale, ranked by the scores alone
  (agents/memrec/rerank.py); `memrec_ranker="vector"` is the paper's Vector configuration (MiniLM
  cosine of facets and candidate memories, agents/memrec/vector_config.py); when no model answers,
  the heuristic blend fallback (ours, with a collaborative part) does.

Ablations share the topology and differ by the MemRecContext overrides and hooks `graphs.registry`
declares: `memrec_no_read` reads no neighbours in Stage R (w/o Collab. Read); `memrec_no_llm_rules`
curates with the hand-set `generic` rules (w/o LLM Curation); `memrec_no_write` (w/o Collab. Write)
runs the Stage W warm-up with memrec_propagate=False: the user's and the item's own memories are
rewritten (Eq. 5), no neighbour's (Eq. 6) (graphs/memrec/write.py is Stage W; graphs/memrec/warmup.py
wires it into the benchmark).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.base import AgentResult
from agents.memrec.curation import Curated, curate, empty_curation, resolve_rule_set, rule_set_name
from agents.memrec.feature_index import feature_index
from agents.memrec.features import CURATION_NEEDS
from agents.memrec.rerank import (
    blend_answer,
    blend_of,
    blend_parts,
    embedder_loaded,
    model_order,
    rank_blend,
    rerank_task,
    tied_ids,
)
from agents.memrec.rules import FEATURES
from agents.memrec.synthesis import SYNTHESIS_NEEDS, synthesis_task
from agents.memrec.vector_config import memory_vectors, vector_configuration
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from prompts.evidence import instruction_for
from state.blackboard import post
from state.context import backend_for
from state.contract import RecInput, RecOutput
from state.degraded import with_degraded
from state.memrec.context import MemRecContext
from state.memrec.schemas import CandidateScores
from state.memrec.state import CuratedRecord, MemRecState
from tools.catalog_index import retrieve_candidates
from tools.memrec.graph import item_node, user_node
from world.environment import Environment, get_environment
from world.errors import RecgraphError
from world.shape import degraded_features

RANKERS = ("llm", "vector")
"""Values of `Context.memrec_ranker`."""


def curated_from_state(env: Environment, records: list[CuratedRecord]) -> Curated:
    """Rebuild the `Curated` arrays from the records `curate` wrote to the state."""
    if not records:
        return empty_curation()
    is_item = np.array([r["kind"] == "item" for r in records])
    index = np.array(
        [env.item_index[r["id"][2:]] if r["kind"] == "item" else env.user_index[r["id"][2:]] for r in records]
    )
    features = np.array([[r["features"][f] for f in FEATURES] for r in records], dtype=np.float64)
    scores = np.array([r["score"] for r in records], dtype=np.float64)
    return Curated([r["id"] for r in records], is_item, index, scores, features, len(records))


def curate_neighbours(state: MemRecState, config: RunnableConfig) -> dict[str, Any]:
    """Candidate-aware curation of the user's neighbourhood (no LLM)."""
    ctx = current_context()
    env = get_environment(ctx.dataset)
    index = feature_index(env, ctx.memrec_memory)
    update: dict[str, Any] = {}
    candidates = state.get("candidates")
    if state.get("retrieve_mode") or not candidates:
        candidates = retrieve_candidates(env, state.get("history", []), ctx.top_k, state.get("user_id"))
        update["candidates"] = candidates
    name = rule_set_name(ctx, env)
    read = ctx.memrec_use_read
    if read:
        rule_set = resolve_rule_set(ctx, env, name)
        found = curate(
            index,
            rule_set,
            state["user_id"],
            candidates,
            ctx.memrec_k,
            ctx.memrec_min_users,
            ctx.memrec_min_items,
            state.get("history"),
            reads_per_kept=ctx.memrec_similarity_reads or None,
            candidate_aware=ctx.memrec_curation == "candidates",
        )
    else:
        found = empty_curation()
    n_items = int(found.is_item.sum())
    note = (
        f"kept {len(found.node_ids)} of {found.pool} neighbours ({n_items} items, "
        f"{len(found.node_ids) - n_items} users) with rules {name!r}"
        if read
        else "collaborative read disabled: no neighbours"
    )
    memory = index.graph.memory(user_node(state["user_id"]))[0]
    update = {
        **update,
        "rule_set": name,
        "curated": found.as_records(),
        "user_memory": memory,
        "trace": [post("curate", note)],
    }
    return with_degraded(update, "curate", degraded_features(env, CURATION_NEEDS) if read else [])


def prepare_synthesis(state: MemRecState, ctx: MemRecContext, env: Environment) -> AgentCall:
    """Stage R: LM_Mem synthesises preference facets from the curated neighbourhood."""
    index = feature_index(env, ctx.memrec_memory)
    found = curated_from_state(env, state.get("curated", []))
    candidates = state["candidates"]
    nodes = [n for n, item in zip(found.node_ids, found.is_item, strict=True) if item]
    memories = {node: text for node, (text, _) in index.graph.memories(nodes).items()}
    task, shown = synthesis_task(
        env,
        index,
        found,
        state["user_id"],
        state.get("user_memory", ""),
        candidates,
        memories,
        ctx.memrec_facets,
        ctx.memrec_token_budget,
        state.get("history"),
        ctx,
    )
    off = degraded_features(env, SYNTHESIS_NEEDS)
    return AgentCall(task, lambda result: with_degraded(synthesis_update(result, shown), "synthesise", off))


def synthesis_update(result: AgentResult, shown: Any) -> dict[str, Any]:
    """The synthesise node's state update: facets, support edges, context size, blackboard post."""
    answer, usage = result.output, result.usage
    facets = [f.model_dump() for f in answer.facets]
    edges = [e.model_dump(by_alias=True) for e in answer.support_edges]
    top = "; ".join(f["facet"] for f in facets[:3]) or "none"
    note = (
        f"[{usage.source}] {len(facets)} facets ({top}); context {shown.tokens} tokens, "
        f"{len(shown.shown)} neighbours shown, {shown.shortened} shortened, {shown.dropped} dropped"
    )
    return {
        "facets": facets,
        "support_edges": edges,
        "context_tokens": shown.tokens,
        "trace": [post("synthesise", note)],
        "usage": [usage.as_dict()],
    }


def prepare_rerank(state: MemRecState, ctx: MemRecContext, env: Environment) -> AgentCall:
    """ReRank: LLM_Rec scores every candidate (`memrec_ranker="vector"`: the Vector configuration,
    no LLM). When no model answers under "llm", the heuristic blend fallback does."""
    if ctx.memrec_ranker not in RANKERS:
        raise RecgraphError(f"memrec_ranker must be one of {', '.join(RANKERS)}, got {ctx.memrec_ranker!r}")
    index = feature_index(env, ctx.memrec_memory)
    found = curated_from_state(env, state.get("curated", []))
    candidates, facets, user = state["candidates"], state.get("facets", []), state["user_id"]
    history = state.get("history")
    # Read here (prepare runs in a worker thread): the fallback may run on the event loop.
    updated = index.updated_vectors()
    # Also loads the candidates' catalog vectors off the loop (the blend fallback reads them too).
    candidate_vectors = memory_vectors(index, candidates, updated)
    vector = ctx.memrec_ranker == "vector"
    ask = replace(ctx, rec_model="heuristic") if vector else None
    if backend_for(ask or ctx, "rec") == "heuristic":  # the fallback answers: MiniLM loads here, off the loop
        embedder_loaded()
    tie_break: dict[str, float] = {}  # filled only when the heuristic blend fallback answers

    def fallback() -> CandidateScores:
        if vector:
            return vector_configuration(candidates, facets, candidate_vectors)
        parts = blend_parts(index, found, user, candidates, facets, history, updated)
        scores = blend_of(parts)
        # The blend's own tie-break: the same blend without the facet part (no embedding).
        quick = blend_of(parts, without="facet")
        tie_break.update((c, float(s)) for c, s in zip(candidates, quick, strict=True))
        return blend_answer(candidates, scores, parts)

    memories = {
        node: text for node, (text, _) in index.graph.memories(item_node(c) for c in candidates).items()
    }
    instruction = instruction_for(env, user, state.get("instruction"), ctx)  # the evidence contract
    user_memory = state.get("user_memory", "")
    task = rerank_task(env, candidates, instruction, user_memory, facets, memories, fallback)
    label = "vector" if vector else None
    return AgentCall(task, lambda result: rerank_update(state, result, tie_break, label), context=ask)


def rerank_update(
    state: MemRecState, result: AgentResult, tie_break: dict[str, float], label: str | None = None
) -> dict[str, Any]:
    """The rerank node's state update: ranking, scores, rationales. The model's answer and the Vector
    configuration are ranked by `model_order` (scores, then the answer's order); the heuristic blend
    fallback by `rank_blend` (its `tie_break` filled when it answered)."""
    answer, usage = result.output, result.usage
    scores = {entry.item_id: entry.score for entry in answer.scores}
    if tie_break:
        ranking = rank_blend(state["candidates"], scores, tie_break)
        source = f"{usage.source}: heuristic blend"
    else:
        ranking = model_order(answer)
        source = label or usage.source
    note = f"[{source}] top {', '.join(ranking[:3])} (score {scores[ranking[0]]:.2f})"
    if usage.source == "llm":
        left_out = len(ranking) - len(set(usage.model_ids or []))
        tied = len(tied_ids(answer))
        note += f"; {tied} tied (in the model's listing order), {left_out} left out (input order)"
    return {
        "ranking": ranking,
        "scores": scores,
        "rationales": {entry.item_id: entry.rationale for entry in answer.scores},
        "trace": [post("rerank", note, score=scores[ranking[0]])],
        "usage": [usage.as_dict()],
    }


# Each of the three reads memories from the SQLite memory graph: off the event loop under ainvoke,
# always, so no first call needs a worker thread of its own (graphs/memrec/nodes.py).
curate_node = step_node("curate", curate_neighbours, blocking=True, warm_first_call=False)
synthesise = agent_node("synthesise", prepare_synthesis, blocking_prepare=True, warm_first_call=False)
rerank = agent_node("rerank", prepare_rerank, blocking_prepare=True, warm_first_call=False)


def build_memrec() -> StateGraph:
    """The uncompiled MemRec graph (its ablations are MemRecContext overrides in `graphs.registry`)."""
    builder = StateGraph(
        MemRecState, input_schema=RecInput, output_schema=RecOutput, context_schema=MemRecContext
    )
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node("curate", curate_node)
    builder.add_node("synthesise", synthesise)
    builder.add_node("rerank", rerank)
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, "curate")
    builder.add_edge("curate", "synthesise")
    builder.add_edge("synthesise", "rerank")
    builder.add_edge("rerank", END)
    return builder


builder = build_memrec()
"""The full MemRec graph, uncompiled."""
graph = compile_method(builder, "memrec")
"""MemRec: curate -> synthesise -> rerank. Its ablations (`memrec_no_read`: memrec_use_read=False;
`memrec_no_llm_rules`: memrec_rules="generic"; `memrec_no_write`: memrec_propagate=False) are this graph
with the overrides and hooks `graphs.registry` declares."""
