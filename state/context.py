"""Runtime knobs every graph reads via `Runtime[Context]` (editable per run in Studio)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal


@dataclass(kw_only=True)
class Context:
    """Per-run configuration shared by all graphs; methods read the fields they need."""

    dataset: str = field(
        default="ml-100k",
        metadata={"description": "Dataset name (e.g. ml-100k) or path whose catalog the graph uses."},
    )
    llm: str = field(
        default_factory=lambda: os.environ.get("RECGRAPH_LLM", "heuristic"),
        metadata={
            "description": "LLM backend for every role: heuristic (no LLM), local (bundled SmolLM2), "
            "sim (the loopback simulator), or openai:<model> (any OpenAI-compatible endpoint)."
        },
    )
    rec_model: str = field(
        default="", metadata={"description": "Backend for reasoning/ranking agents (empty: `llm`)."}
    )
    mem_model: str = field(
        default="", metadata={"description": "Backend for memory-manager agents (empty: `llm`)."}
    )
    planner_model: str = field(
        default="", metadata={"description": "Backend for planner agents (empty: `llm`)."}
    )
    base_url: str = field(
        default_factory=lambda: os.environ.get("RECGRAPH_BASE_URL", ""),
        metadata={"description": "OpenAI-compatible endpoint for openai:/sim backends (empty: default)."},
    )
    llm_timeout: float = field(
        default=60.0, metadata={"description": "Seconds before one LLM request is abandoned."}
    )
    llm_retries: int = field(
        default=2,
        metadata={"description": "Extra attempts after a failed or invalid answer, before the fallback."},
    )
    llm_backoff: float = field(
        default=0.5, metadata={"description": "First retry delay in seconds (doubles per attempt)."}
    )
    requests_per_second: float = field(
        default=0.0, metadata={"description": "Client-side rate limit for remote providers (0: none)."}
    )
    temperature: float = field(default=0.0, metadata={"description": "Sampling temperature."})
    max_output_tokens: int = field(default=512, metadata={"description": "Cap on tokens per LLM answer."})
    recency_items: int = field(
        default=5, metadata={"description": "recency_llm: how many recent interactions the prompt shows."}
    )
    prompt_history_items: int = field(
        default=50, metadata={"description": "vanilla_llm: most recent history items shown (0: all)."}
    )
    rag_items: int = field(
        default=10, metadata={"description": "vanilla_rag: history items retrieved into the prompt."}
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
    recall_k: int = field(
        default=0,
        metadata={"description": "ARAG retrieve mode: recall-set size k from the catalog index (0: top_k)."},
    )
    session_items: int = field(
        default=5,
        metadata={
            "description": "ARAG: the last N history items are the current session C_st; the rest is "
            "the long-term context C_lt."
        },
    )
    long_term_items: int = field(
        default=30,
        metadata={"description": "ARAG: most recent long-term items the prompts list (0: all)."},
    )
    nli_threshold: float = field(
        default=5.0,
        metadata={
            "description": "ARAG: θ on the 0–10 NLI scale (5 = neutral); items scoring at least θ are "
            "accepted into the context summary (the rest are still ranked)."
        },
    )
    nli_mode: Literal["batched", "per_item"] = field(
        default="batched",
        metadata={
            "description": "ARAG: batched = one NLI call scores every recalled item; per_item = one "
            "call per item (fanned out with Send, still in parallel with user understanding)."
        },
    )
    use_nli: bool = field(
        default=True,
        metadata={"description": "ARAG: run the NLI agent (off: the context summary covers all items)."},
    )
    use_csa: bool = field(
        default=True,
        metadata={"description": "ARAG: run the context summary agent (off: the ranker reads no S_ctx)."},
    )
    # MemRec (graphs/memrec.py)
    memrec_rules: str = field(
        default="auto",
        metadata={
            "description": "MemRec curation rule set: a shipped name (books, goodreads, movietv, yelp, "
            "generic), a JSON file path, or auto (from the dataset name: ml-*/movie -> movietv, "
            "book -> books, goodreads, yelp; otherwise generic)."
        },
    )
    memrec_k: int = field(
        default=16, metadata={"description": "MemRec: curated neighbours k (users + items)."}
    )
    memrec_min_users: int = field(
        default=4, metadata={"description": "MemRec: user neighbours kept whatever their score (floor)."}
    )
    memrec_min_items: int = field(
        default=4, metadata={"description": "MemRec: item neighbours kept whatever their score (floor)."}
    )
    memrec_facets: int = field(
        default=7, metadata={"description": "MemRec: preference facets N_f (Stage R)."}
    )
    memrec_token_budget: int = field(
        default=1800,
        metadata={
            "description": "MemRec: token budget tau of the Stage R context (about 4 characters a token)."
        },
    )
    memrec_ranker: str = field(
        default="llm",
        metadata={
            "description": "MemRec Stage ReRank: llm (LLM_Rec, role rec) or vector (the paper's Vector "
            "configuration: facet match + embedding similarity + collaborative signal, no LLM)."
        },
    )
    memrec_use_read: bool = field(
        default=True,
        metadata={"description": "MemRec: read curated neighbours in Stage R (False: w/o Collab. Read)."},
    )
    memrec_fanout_cap: int = field(
        default=8,
        metadata={"description": "MemRec Stage W: at most this many curated neighbours updated per write."},
    )
    memrec_write_mode: str = field(
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


def backend_for(context: Context, role: str) -> str:
    """The backend spec of a role ("rec", "mem" or "planner"), falling back to `llm`."""
    specific = {"rec": context.rec_model, "mem": context.mem_model, "planner": context.planner_model}
    return specific.get(role) or context.llm


def context_or_default(context: Context | None) -> Context:
    """The run's context, or the defaults when the caller passed none."""
    return context if context is not None else Context()
