"""From cluster cards to a tool library file (paper Sec. 4.2 (iii), appendix B "From clusters to tools").

Each cluster maps to the base library's tool whose card is closest to the cluster's centroid, and to
every other tool whose cosine is at least (1 − `margin`) times that best one (the paper's [4] →
PositivePreference / NegativePreference: one cluster, two tools). The margin is relative because
MiniLM's cosines between a step label and a tool card are low and cluster-dependent (0.28–0.62 on the
shipped fixture). The mined library holds the base cards of the tools some
cluster maps to, in the base library's order, each card recording its clusters, and the file records
the cluster -> tools mapping. A tool no cluster maps to is left out: the library says what the traces
support. Cards are the base library's (their agents, stages and fusion weights); mining chooses which
of them exist, it writes no new agent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agents.chainrec.online.library_file import ToolLibrary, write_library

MAP_MARGIN = 0.05
"""A cluster also maps to every tool whose cosine is at least (1 − this) times its best tool's."""
LIBRARY_NAME = "library.json"
"""The library file mining writes into its output folder (unless `--library-out` names another)."""


def mapped_tools(scores: Mapping[str, float], margin: float) -> list[str]:
    """The tools one cluster maps to: the best-scoring one and every tool scoring at least
    (1 − `margin`) times it, best first (ties: name order)."""
    best = max(scores.values())
    floor = best - margin * abs(best)
    return sorted((t for t, s in scores.items() if s >= floor), key=lambda t: (-scores[t], t))


def mined_library(
    cards: Sequence[Mapping[str, Any]], base: ToolLibrary, summary: Mapping[str, Any], source: str
) -> ToolLibrary:
    """The library the cards' `tools` mappings build over `base` (every mapped tool's base card, in
    base order) with the cluster -> tools map and the mining run's figures."""
    clusters = {str(card["cluster"]): tuple(card["tools"]) for card in cards}
    used = {tool for tools in clusters.values() for tool in tools}
    catalog = tuple(spec for spec in base.catalog if spec.name in used)
    mining = {
        "base": base.path,
        "k": summary["k"],
        "silhouette": summary["silhouette"].get(str(summary["k"])),
        "traces": summary["traces"],
        "map_margin": summary.get("map_margin"),
        "unmapped": [spec.name for spec in base.catalog if spec.name not in used],
    }
    return ToolLibrary(catalog, clusters, source, "", mining)


def write_mined(path: Path, library: ToolLibrary) -> ToolLibrary:
    """Write the mined library to `path`; the library as written (with its path)."""
    write_library(path, library)
    return ToolLibrary(library.catalog, library.clusters, library.source, str(path), library.mining)
