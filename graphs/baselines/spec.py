"""The baselines' registry entries: classic rankers (no LLM) and single-call LLM rankers."""

from __future__ import annotations

from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.baselines.context import BaselinesContext


def one_call(context: BaselinesContext, candidates: int) -> CallPlan:
    """Single-agent LLM baselines: one ranking request."""
    return CallPlan(1)


def _classic(graph: str, summary: str, **options: bool) -> MethodSpec:
    return MethodSpec(f"graphs.baselines.classic:{graph}", "classic", summary, BaselinesContext, **options)


def _trained(name: str, summary: str) -> MethodSpec:
    return MethodSpec(
        f"graphs.baselines.trained:{name}_graph",
        "classic",
        summary,
        BaselinesContext,
        prepare="graphs.baselines.trained:train_for_bench",
        remote_prepare="graphs.baselines.trained:train_on_server",
    )


def _llm(graph: str, summary: str) -> MethodSpec:
    return MethodSpec(
        f"graphs.baselines.llm:{graph}",
        "llm",
        summary,
        BaselinesContext,
        llm_calls=one_call,
        item_vectors=True,
    )


METHODS: dict[str, MethodSpec] = {
    "random": _classic("random_graph", "seeded random order"),
    "popularity": _classic("popularity_graph", "training popularity"),
    "itemknn": _classic("itemknn_graph", "item-item co-occurrence CF"),
    "bpr": _classic("bpr_graph", "BPR matrix factorisation"),
    "sasrec": _trained("sasrec", "SASRec self-attentive sequential model (cornac)"),
    "gru4rec": _trained("gru4rec", "GRU4Rec recurrent sequential model (cornac)"),
    "lightgcn": _trained("lightgcn", "LightGCN graph collaborative filtering (PyG)"),
    "embedding": _classic("embedding_graph", "MiniLM cosine to recent history", item_vectors=True),
    "vanilla_llm": _llm("vanilla_llm_graph", "zero-shot LLM ranking (LLMRank)"),
    "recency_llm": _llm("recency_llm_graph", "LLM ranking from recent items (ARAG)"),
    "vanilla_rag": _llm("vanilla_rag_graph", "LLM ranking with retrieved history"),
    "llmrank_sequential": _llm("llmrank_sequential_graph", "LLMRank sequential prompting"),
    "llmrank_recency": _llm("llmrank_recency_graph", "LLMRank recency-focused prompting"),
    "llmrank_icl": _llm("llmrank_icl_graph", "LLMRank in-context learning prompting"),
}
"""The baselines by name, in the order `all` runs them."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {}
"""None: the baselines keep no memory."""
