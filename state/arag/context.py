"""ARAG's runtime knobs (graphs/arag/graph.py): the common `Context` plus its own knobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from state.context import Context


@dataclass(kw_only=True)
class AragContext(Context):
    """ARAG: recall size, session split, NLI threshold and agent switches."""

    arag_recall_k: int = field(
        default=0,
        metadata={"description": "ARAG retrieve mode: recall-set size k from the catalog index (0: top_k)."},
    )
    arag_session_items: int = field(
        default=5,
        metadata={
            "description": "ARAG: at most the last N history items are the current session C_st; the "
            "rest is the long-term context C_lt."
        },
    )
    arag_session_gap_hours: float = field(
        default=24.0,
        metadata={
            "description": "ARAG: with real timestamps, C_st is the trailing run of interactions at most "
            "this many hours apart (capped at arag_session_items); 0 or order-only data: the last "
            "arag_session_items by position."
        },
    )
    arag_nli_threshold: float = field(
        default=5.0,
        metadata={
            "description": "ARAG: θ on the 0–10 NLI scale (5 = neutral); items scoring at least θ are "
            "accepted into the context summary (the rest are still ranked).",
            "maximum": 10,
        },
    )
    arag_nli_mode: Literal["batched", "per_item"] = field(
        default="batched",
        metadata={
            "description": "ARAG: batched = one NLI call scores every recalled item; per_item = one "
            "call per item (fanned out with Send, still in parallel with user understanding)."
        },
    )
    arag_use_nli: bool = field(
        default=True,
        metadata={"description": "ARAG: run the NLI agent (off: the context summary covers all items)."},
    )
    arag_use_csa: bool = field(
        default=True,
        metadata={"description": "ARAG: run the context summary agent (off: the ranker reads no S_ctx)."},
    )
