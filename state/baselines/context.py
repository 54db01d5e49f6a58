"""The baselines' context: the common knobs plus each baseline's own, prefixed by its method name
(graphs/baselines/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from state.context import Context


@dataclass(kw_only=True)
class BaselinesContext(Context):
    """Classic and single-call LLM baselines: history windows, neighbours and BPR's factors."""

    recency_llm_items: int = field(
        default=5, metadata={"description": "recency_llm: how many recent interactions the prompt shows."}
    )
    vanilla_llm_history_items: int = field(
        default=50, metadata={"description": "vanilla_llm: most recent history items shown (0: all)."}
    )
    vanilla_rag_items: int = field(
        default=10, metadata={"description": "vanilla_rag: history items retrieved into the prompt."}
    )
    embedding_recent_items: int = field(
        default=10,
        metadata={"description": "embedding: how many of the most recent history items profile the user."},
    )
    itemknn_neighbors: int = field(
        default=50,
        metadata={"description": "ItemKNN: neighbours kept per history item (0 keeps all)."},
    )
    bpr_factors: int = field(default=64, metadata={"description": "BPR: latent factors."})
    bpr_iterations: int = field(default=100, metadata={"description": "BPR: training epochs."})
