"""Runtime knobs every graph reads via `Runtime[Context]` (editable per run in Studio)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(kw_only=True)
class Context:
    """Per-run configuration shared by all graphs; methods read the fields they need."""

    dataset: str = field(
        default="ml-100k",
        metadata={"description": "Dataset name (e.g. ml-100k) or path whose catalog the graph uses."},
    )
    seed: int = field(
        default=0,
        metadata={"description": "Seed for anything random a method does (random baseline, BPR)."},
    )
    top_k: int = field(
        default=10,
        metadata={"description": "How many items to return when no candidates are given."},
    )
    recent_items: int = field(
        default=10,
        metadata={"description": "How many of the most recent history items profile the user."},
    )
    itemknn_neighbors: int = field(
        default=50,
        metadata={"description": "ItemKNN: neighbours kept per history item (0 keeps all)."},
    )
    bpr_factors: int = field(default=64, metadata={"description": "BPR: latent factors."})
    bpr_iterations: int = field(default=100, metadata={"description": "BPR: training epochs."})


def context_or_default(context: Context | None) -> Context:
    """The run's context, or the defaults when the caller passed none."""
    return context if context is not None else Context()
