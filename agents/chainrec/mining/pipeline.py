"""The mining pipeline on a list of traces: filter, normalise, cluster, card."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.chainrec.mining.cards import build_cards, tool_vectors, write_cards
from agents.chainrec.mining.clusters import cluster_labels
from agents.chainrec.mining.filters import DROP_REASONS, select
from agents.chainrec.mining.labels import normalise_label
from agents.chainrec.mining.records import Trace
from agents.chainrec.online.catalog import ACTIONS


def mine(
    traces: Sequence[Trace], budget: int, k_min: int, k_max: int, seed: int = 0
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's summary (trace counts, steps, silhouette and J(k) per k, chosen k) and its cards."""
    selection = select(traces, budget)
    occurrences: list[str] = []
    examples: dict[str, tuple[str, str]] = {}
    for trace in selection.kept:
        for step in trace.steps:
            label = normalise_label(step.label)
            occurrences.append(label)
            examples.setdefault(label, (step.label, step.text))
    clustering = cluster_labels(occurrences, k_min, k_max, seed)
    cards = build_cards(clustering, examples, tool_vectors())
    summary = {
        "traces": {
            "total": selection.total,
            "kept": len(selection.kept),
            "dropped": {
                reason: selection.dropped[reason] for reason in DROP_REASONS if selection.dropped[reason]
            },
        },
        "step_budget": budget,
        "steps": len(occurrences),
        "distinct_labels": len(clustering.labels),
        "k_range": [min(clustering.silhouette), max(clustering.silhouette)],
        "silhouette": {str(k): v for k, v in clustering.silhouette.items()},
        "inertia": {str(k): v for k, v in clustering.inertia.items()},
        "k": clustering.k,
        "seed": seed,
        "tool_map": {name: [c["cluster"] for c in cards if c["tool"] == name] for name in ACTIONS},
    }
    return summary, cards


def mine_to(
    out: Path, traces: Sequence[Trace], budget: int, k_min: int, k_max: int, seed: int = 0
) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[Path, Path]]:
    """`mine` and write the cards into `out` (clusters.json, clusters.md)."""
    summary, cards = mine(traces, budget, k_min, k_max, seed)
    return summary, cards, write_cards(out, summary, cards)
