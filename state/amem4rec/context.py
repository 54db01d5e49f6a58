"""AMEM4Rec's runtime knobs (graphs/amem4rec/): the common `Context` plus its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from state.context import Context

POOL_CONFIG_FIELDS = (
    "amem4rec_window",
    "amem4rec_top_l",
    "amem4rec_tau_low",
    "amem4rec_tau_high",
    "amem4rec_p_high",
    "amem4rec_p_low",
    "amem4rec_evolution",
    "amem4rec_semantic",
    "amem4rec_similarity",
    "amem4rec_round_windows",
    "amem4rec_memory_chars",
)
"""The knobs that shape what a trained pool contains: a pool records them in its manifest and
refuses to be trained further with other values."""
PAPER_TRAINING = {"amem4rec_round_windows": 1, "amem4rec_windows_per_user": 0}
"""The training settings a reproduction of the paper uses (Algorithm 1): strictly one window after
another, each against the pool the previous one left, over every window of every user. The other
knobs' defaults already are the paper's (w=3, |L|=5, K=5, tau 0.55 / 0.9). `recgraph bench`'s
defaults trade these two for time (graphs/amem4rec/FIDELITY.md)."""


@dataclass(kw_only=True)
class Amem4RecContext(Context):
    """AMEM4Rec: window, similarity thresholds, retrieval sizes, ablation switches, the pool."""

    amem4rec_window: int = field(
        default=3, metadata={"description": "AMEM4Rec: w, consecutive training items per window."}
    )
    amem4rec_top_l: int = field(
        default=5,
        metadata={"description": "AMEM4Rec: |L|, pool memories the similarity validator compares."},
    )
    amem4rec_top_k: int = field(
        default=5, metadata={"description": "AMEM4Rec: K, memories retrieved for the ranker."}
    )
    amem4rec_tau_low: float = field(
        default=0.55, metadata={"description": "AMEM4Rec: tau_low, lower cosine threshold of Eq. 7."}
    )
    amem4rec_tau_high: float = field(
        default=0.9, metadata={"description": "AMEM4Rec: tau_high, upper cosine threshold of Eq. 7."}
    )
    amem4rec_p_high: float = field(
        default=0.6,
        metadata={"description": "AMEM4Rec: share of neighbours >= tau_high that means UPDATE only."},
    )
    amem4rec_p_low: float = field(
        default=0.5,
        metadata={"description": "AMEM4Rec: share of neighbours < tau_low that means STORE only."},
    )
    amem4rec_windows_per_user: int = field(
        default=5,
        metadata={
            "description": "AMEM4Rec training: at most this many windows per user, the most recent "
            "(0: every window, as the paper and PAPER_TRAINING do; a cap keeps bench's training time "
            "bounded)."
        },
    )
    amem4rec_round_windows: int = field(
        default=16,
        metadata={
            "description": "AMEM4Rec training: windows proposed against one pool snapshot before their "
            "commits are applied in window order (1: strictly one window after another against the "
            "pool the previous one left, Algorithm 1 and PAPER_TRAINING; more: a speed knob)."
        },
    )
    amem4rec_pool: str = field(
        default="",
        metadata={
            "description": "AMEM4Rec pool directory; empty: the dataset's default pool under "
            "RECGRAPH_HOME (per pool configuration)."
        },
    )
    amem4rec_evolution: bool = field(
        default=True,
        metadata={"description": "AMEM4Rec: evolve linked memories (False: store only, w/o evolution)."},
    )
    amem4rec_semantic: bool = field(
        default=True,
        metadata={
            "description": "AMEM4Rec: ask the semantic validator which memories to link (False: every "
            "memory passing the similarity validator is evolved)."
        },
    )
    amem4rec_similarity: bool = field(
        default=True,
        metadata={
            "description": "AMEM4Rec: apply Eq. 7's similarity policy (False: all top-|L| memories go to "
            "the semantic validator and the new memory is stored)."
        },
    )
    amem4rec_commit_mode: Literal["apply", "propose"] = field(
        default="apply",
        metadata={
            "description": "AMEM4Rec training graph: apply (commit writes the pool) or propose (return "
            "the commit plan; the training driver applies plans in window order)."
        },
    )
    amem4rec_memory_chars: int = field(
        default=300,
        metadata={"description": "AMEM4Rec: bound on each memory field after extraction or evolution."},
    )
    amem4rec_recent_items: int = field(
        default=10,
        metadata={
            "description": "AMEM4Rec inference: recent history items that query the pool and that the "
            "ranker sees."
        },
    )
    amem4rec_history_weight: float = field(
        default=0.5,
        metadata={
            "description": "AMEM4Rec ranking fallback: weight of a candidate's cosine to the recent history."
        },
    )
    amem4rec_memory_weight: float = field(
        default=0.5,
        metadata={
            "description": "AMEM4Rec ranking fallback: weight of a candidate's retrieval-weighted cosine "
            "to the retrieved memories."
        },
    )
