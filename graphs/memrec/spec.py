"""MemRec's registry entries: the full method, its three ablations, and the Stage W service graph."""

from __future__ import annotations

from typing import Any

from graphs.evidence_use import CONTRACT_CANDIDATES, TRAINING, EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.memrec.context import MemRecContext


def memrec_calls(context: MemRecContext, candidates: int) -> CallPlan:
    """The warm-up's Stage R synthesis and write (LM_Mem), then facet synthesis and rerank."""
    return CallPlan(4, note="2 of them are the Stage W warm-up (its Stage R synthesis and the write)")


WARMUP = "; Stage W writes each evaluated user's latest training interaction"
"""What MemRec's bench warm-up learns from (graphs/memrec/warmup.py)."""


def _memrec(summary: str, cost: float, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.memrec.graph:graph",
        "llm",
        summary,
        MemRecContext,
        overrides,
        prepare="graphs.memrec.warmup:with_stage_w",
        remote_prepare="graphs.memrec.remote_warmup:with_stage_w_remote",
        preload="graphs.memrec.preload:preload",
        perf_prepare="graphs.memrec.perf:read_ahead_for_perf",
        perf_extras="graphs.memrec.perf:memrec_extras",
        record_extras="graphs.memrec.whole_run:ranked",
        cli="recgraph.memrec.command:register",
        llm_calls=memrec_calls,
        item_vectors=True,
        prepare_cost=cost,
        reported=("memrec_rules", "memrec_memory"),
        evidence=EvidenceUse(
            "all visible (curation, facets); its memory holds the training history",
            f"{CONTRACT_CANDIDATES} (Stage R); candidate memories, started from title and description"
            " (rerank)",
            learns_from=TRAINING + WARMUP,
        ),
    )


METHODS: dict[str, MethodSpec] = {
    "memrec": _memrec("MemRec: curate, synthesise facets, rerank; Stage W", 42),
    "memrec_no_read": _memrec("MemRec without collaborative read", 4, memrec_use_read=False),
    "memrec_no_llm_rules": _memrec("MemRec with the generic curation rules", 24, memrec_rules="generic"),
    "memrec_no_write": _memrec(
        "MemRec without collaborative write (Stage W updates the user and the item only)", 4,
        memrec_propagate=False,
    ),
}
"""MemRec and its ablations (one graph; each ablation is a context override)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {
    "memrec_write": ServiceGraph(
        "graphs.memrec.write:graph",
        "MemRec Stage W: propagate one interaction into the memory graph",
        {"user_id": "1", "item_id": "50"},
    ),
    "memrec_apply": ServiceGraph(
        "graphs.memrec.remote_apply:graph",
        "MemRec Stage W: apply proposed jobs in the order given (the warm-up of runs on a deployment)",
        {"user_id": "1", "jobs": []},
    ),
}
"""Stage W as its own graph (Studio, and the bench warm-up's writes), and its apply step (the warm-up
of `recgraph bench --server`)."""
