"""MemRec's runtime knobs (graphs/memrec/): the common `Context` plus its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from state.context import Context


@dataclass(kw_only=True)
class MemRecContext(Context):
    """MemRec: curation rules, neighbourhood size, facets, token budget, ranker, Stage W."""

    memrec_rules: str = field(
        default="auto",
        metadata={
            "description": "MemRec curation rule set: a shipped name (books, goodreads, movietv, yelp, "
            "generic), a JSON file path, or auto (from the dataset name: ml-*/movie -> movietv, "
            "book -> books, goodreads, yelp; otherwise generic)."
        },
    )
    memrec_k: int = field(
        default=16,
        metadata={"description": "MemRec: curated neighbours k (users + items).", "minimum": 1},
    )
    memrec_similarity_reads: int = field(
        default=4,
        metadata={
            "description": "MemRec curation: user memories read (embedded) per neighbour kept, the "
            "best upper bounds first (agents/memrec/similarity_reads.py); 0 reads every one that could "
            "rank (exact, slow on big title-only catalogs)."
        },
    )
    memrec_min_users: int = field(
        default=4, metadata={"description": "MemRec: user neighbours kept whatever their score (floor)."}
    )
    memrec_min_items: int = field(
        default=4, metadata={"description": "MemRec: item neighbours kept whatever their score (floor)."}
    )
    memrec_facets: int = field(
        default=7, metadata={"description": "MemRec: preference facets N_f (Stage R).", "minimum": 1}
    )
    memrec_token_budget: int = field(
        default=1800,
        metadata={
            "description": "MemRec: token budget tau of the Stage R context (about 4 characters a token)."
        },
    )
    memrec_ranker: Literal["llm", "vector"] = field(
        default="llm",
        metadata={
            "description": "MemRec Stage ReRank: llm (LLM_Rec, role rec, ranked by its scores alone; when no "
            "model answers, the heuristic blend fallback: facet match + embedding + collaborative signal) "
            "or vector (the paper's Vector configuration: MiniLM cosine of the facets and each "
            "candidate's memory, confidence-weighted, no LLM)."
        },
    )
    memrec_use_read: bool = field(
        default=True,
        metadata={"description": "MemRec: read curated neighbours in Stage R (False: w/o Collab. Read)."},
    )
    memrec_curation: Literal["history", "candidates"] = field(
        default="history",
        metadata={
            "description": "MemRec curation features: history (Eq. 2: neighbours scored from the user's "
            "own history and the rules, no candidates) or candidates (ours: item co-occurrence and "
            "category overlap with the candidates; FIDELITY names the paired difference)."
        },
    )
    memrec_fanout_cap: int = field(
        default=16,
        metadata={
            "description": "MemRec Stage W: at most this many neighbours of N'_k rewritten per write (the "
            "model chooses which; default 16, the paper's k; it does not follow memrec_k)."
        },
    )
    memrec_propagate: bool = field(
        default=True,
        metadata={
            "description": "MemRec Stage W: propagate to the curated neighbours N'_k (Eq. 6); False: "
            "w/o Collab. Write, each write updates the user's and the item's own memories only (Eq. 5)."
        },
    )
    memrec_warmup: Literal["concurrent", "sequential"] = field(
        default="concurrent",
        metadata={
            "description": "MemRec bench warm-up: concurrent (every write proposed from the initial "
            "memories, then applied in user-id order, a rewrite of a node an earlier write changed "
            "merged in) or sequential (the paper's Sec. 2.1.3: in interaction order, each write reads "
            "the memories the previous one left; one user at a time, so about concurrency times "
            "slower with a hosted LM_Mem)."
        },
    )
    memrec_write_mode: Literal["background", "sync", "propose"] = field(
        default="background",
        metadata={
            "description": "MemRec Stage W: background (queue for the background writer and return), sync "
            "(apply before returning; reproducible) or propose (return the job, apply nothing)."
        },
    )
    memrec_memory: str = field(
        default="",
        metadata={
            "description": "MemRec memory graph file (SQLite); empty: the dataset's default file "
            "under RECGRAPH_HOME."
        },
    )
