"""The mining pipeline on a list of traces: filter, normalise, cluster, card, and the library the
cards build (library.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agents.chainrec.mining.cards import build_cards, tool_vectors, write_cards
from agents.chainrec.mining.clusters import cluster_labels
from agents.chainrec.mining.filters import DROP_REASONS, select
from agents.chainrec.mining.labels import normalise_label
from agents.chainrec.mining.library import LIBRARY_NAME, MAP_MARGIN, mined_library, write_mined
from agents.chainrec.mining.records import Trace
from agents.chainrec.online.library_file import ToolLibrary, load_library


@dataclass(frozen=True)
class MiningSettings:
    """What one mining run is asked (`recgraph chainrec mine-tools`' options)."""

    budget: int
    """Most CoT steps kept over the traces (filters.select)."""
    k_min: int
    """Fewest clusters of the k sweep."""
    k_max: int
    """Most clusters of the k sweep."""
    seed: int = 0
    """Seed of the clustering."""
    base: ToolLibrary | None = None
    """The library whose tools the clusters map onto (None: the shipped library)."""
    margin: float = MAP_MARGIN
    """Relative margin: a tool scoring at least (1 - margin) times a cluster's best maps onto it too."""


def mine(traces: Sequence[Trace], settings: MiningSettings) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The run's summary (trace counts, steps, silhouette and J(k) per k, chosen k, tool -> clusters)
    and its cards, each cluster mapped onto the base library's tools (default: the shipped library)."""
    budget, seed, margin = settings.budget, settings.seed, settings.margin
    base = settings.base or load_library()
    selection = select(traces, budget)
    occurrences: list[str] = []
    examples: dict[str, tuple[str, str]] = {}
    for trace in selection.kept:
        for step in trace.steps:
            label = normalise_label(step.label)
            occurrences.append(label)
            examples.setdefault(label, (step.label, step.text))
    clustering = cluster_labels(occurrences, settings.k_min, settings.k_max, seed)
    cards = build_cards(clustering, examples, tool_vectors(base.catalog), margin)
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
        "map_margin": margin,
        "tool_map": {name: [c["cluster"] for c in cards if name in c["tools"]] for name in base.names},
    }
    return summary, cards


def mine_to(
    out: Path,
    traces: Sequence[Trace],
    settings: MiningSettings,
    library_path: Path | None = None,
    source: str = "",
) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[Path, Path], ToolLibrary]:
    """`mine`, write the cards into `out` (clusters.json, clusters.md) and the library they build into
    `library_path` (default `out/library.json`)."""
    base = settings.base or load_library()
    summary, cards = mine(traces, replace(settings, base=base))
    written = write_cards(out, summary, cards)
    library = mined_library(cards, base, summary, source or "mined")
    library = write_mined(library_path or out / LIBRARY_NAME, library)
    return summary, cards, written, library
