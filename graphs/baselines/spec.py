"""The baselines' registry entries: classic rankers (no LLM) and single-call LLM rankers."""

from __future__ import annotations

from graphs.evidence_use import TRAINING, VALIDATION_PICKS, EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.baselines.context import BaselinesContext


def one_call(context: BaselinesContext, candidates: int) -> CallPlan:
    """Single-agent LLM baselines: one ranking request."""
    return CallPlan(1)


IDS = "ids only"
"""What a classic ranker sees of a candidate."""


def _classic(graph: str, summary: str, evidence: EvidenceUse, **options: bool) -> MethodSpec:
    graph = f"graphs.baselines.classic:{graph}"
    return MethodSpec(graph, "classic", summary, BaselinesContext, evidence=evidence, **options)


def _trained(name: str, summary: str, history: str, cost: float) -> MethodSpec:
    return MethodSpec(
        f"graphs.baselines.trained:{name}_graph",
        "classic",
        summary,
        BaselinesContext,
        prepare="graphs.baselines.trained:train_for_bench",
        remote_prepare="graphs.baselines.trained:train_on_server",
        prepare_family=name,  # each model's weights are its own files: the three train side by side
        prepare_cost=cost,
        evidence=EvidenceUse(history, IDS, instruction=False, learns_from=TRAINING + VALIDATION_PICKS),
    )


def _llm(graph: str, summary: str, history: str) -> MethodSpec:
    return MethodSpec(
        f"graphs.baselines.llm:{graph}",
        "llm",
        summary,
        BaselinesContext,
        llm_calls=one_call,
        item_vectors=True,
        evidence=EvidenceUse(history),
    )


LLMRANK_HISTORY = "last {llmrank_history_items} (LLMRank's own 50: `llmrank_history_items`)"
"""The LLMRank prompts' history: the paper's value, through a knob of their own."""


METHODS: dict[str, MethodSpec] = {
    "random": _classic("random_graph", "seeded random order", EvidenceUse("none", IDS, instruction=False)),
    "popularity": _classic(
        "popularity_graph", "training popularity",
        EvidenceUse("none", IDS, instruction=False, learns_from=TRAINING + " (counts)"),
    ),
    "itemknn": _classic(
        "itemknn_graph", "item-item co-occurrence CF",
        EvidenceUse("all visible", IDS, instruction=False, learns_from=TRAINING),
    ),
    "bpr": _classic(
        "bpr_graph", "BPR matrix factorisation",
        EvidenceUse("all visible", IDS, instruction=False, learns_from=TRAINING),
    ),
    "sasrec": _trained(
        "sasrec", "SASRec self-attentive sequential model (cornac)", "last {sasrec_max_len}", 80
    ),
    "gru4rec": _trained(
        "gru4rec", "GRU4Rec recurrent sequential model (cornac)", "last {gru4rec_max_len}", 40
    ),
    "lightgcn": _trained(
        "lightgcn", "LightGCN graph collaborative filtering (PyG)", "training history (its user embedding)",
        70,
    ),
    "embedding": _classic(
        "embedding_graph", "MiniLM cosine to recent history",
        EvidenceUse("last {embedding_recent_items}", "MiniLM vector of its text", instruction=False),
        item_vectors=True,
    ),
    "vanilla_llm": _llm("vanilla_llm_graph", "zero-shot LLM ranking (LLMRank)", "last {history_items}"),
    "recency_llm": _llm(
        "recency_llm_graph", "LLM ranking from recent items (ARAG)",
        "last {recency_llm_items} (the recency baseline's own window: `recency_llm_items`)",
    ),
    "vanilla_rag": _llm(
        "vanilla_rag_graph", "LLM ranking with retrieved history",
        "{vanilla_rag_items} retrieved from all visible (`vanilla_rag_items`)",
    ),
    "llmrank_sequential": _llm("llmrank_sequential_graph", "LLMRank sequential prompting", LLMRANK_HISTORY),
    "llmrank_recency": _llm("llmrank_recency_graph", "LLMRank recency-focused prompting", LLMRANK_HISTORY),
    "llmrank_icl": _llm("llmrank_icl_graph", "LLMRank in-context learning prompting", LLMRANK_HISTORY),
}  # fmt: skip
"""The baselines by name, in the order `all` runs them."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {}
"""None: the baselines keep no memory."""
