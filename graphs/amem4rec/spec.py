"""AMEM4Rec's registry entries: the full method, its three ablations, and the training graph."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graphs.evidence_use import EvidenceUse
from graphs.hooks import CallPlan
from graphs.method_spec import MethodSpec, ServiceGraph
from state.amem4rec.context import Amem4RecContext


def amem4rec_calls(context: Amem4RecContext, candidates: int) -> CallPlan:
    """One ranking request; the training windows before it are its `training_calls` hook's."""
    return CallPlan(1, note="plus the memory pool's training, if not trained yet")


def _amem4rec(summary: str, cost: float, **overrides: Any) -> MethodSpec:
    return MethodSpec(
        "graphs.amem4rec.graph:graph",
        "llm",
        summary,
        Amem4RecContext,
        overrides,
        prepare="graphs.amem4rec.hooks:train_for_bench",
        remote_prepare="graphs.amem4rec.remote_training:train_remotely",
        perf_prepare="graphs.amem4rec.hooks:train_for_perf",
        perf_extras="graphs.amem4rec.hooks:ranking_perf",
        cli="recgraph.amem4rec.command:register",
        llm_calls=amem4rec_calls,
        training_calls="graphs.amem4rec.training_plan:amem4rec_training_calls",
        item_vectors=True,
        prepare_cost=cost,
        reported=("amem4rec_pool",),
        evidence=EvidenceUse(
            "last {history_items} (ranker); last {amem4rec_recent_items} query the pool",
            learns_from="a pool trained on training windows (latest {amem4rec_windows_per_user} per user)",
        ),
    )


METHODS: dict[str, MethodSpec] = {
    "amem4rec": _amem4rec(
        "AMEM4Rec: cross-user pattern memory pool; retrieve K memories, rank in one call", 150
    ),
    "amem4rec_no_evolution": _amem4rec(
        "AMEM4Rec without evolution (store only)", 18, amem4rec_evolution=False
    ),
    "amem4rec_no_semantic": _amem4rec(
        "AMEM4Rec without the semantic validator", 11, amem4rec_semantic=False
    ),
    "amem4rec_no_similarity": replace(
        _amem4rec("AMEM4Rec without the similarity validator", 140, amem4rec_similarity=False),
        # Its own prepare family: its pool shares the extraction stage (built under a lock, so two
        # steps at once take turns) and little else (its rounds' batches hold other texts), so it
        # trains beside AMEM4Rec's instead of after the other two ablations.
        prepare_family="amem4rec_no_similarity",
    ),
}
"""AMEM4Rec and its ablations (one ranking graph; each ablation trains its own pool)."""

SERVICE_GRAPHS: dict[str, ServiceGraph] = {
    "amem4rec_train": ServiceGraph(
        "graphs.amem4rec.train_graph:graph",
        "AMEM4Rec training: one window through extraction, Eq. 7, linking, evolution and commit",
        {"user_id": "1", "start": 0},
    ),
    "amem4rec_commit": ServiceGraph(
        "graphs.amem4rec.remote_commit:graph",
        "AMEM4Rec training: apply proposed window plans in the order given (training on a deployment)",
        {"user_id": "1", "plans": []},
    ),
}
"""One training window as its own graph (Studio, and the bench training rounds), and the rounds' apply
step (training for `recgraph bench --server`)."""
