"""report.png: headline metrics per method with 95% CIs and, against a reference, paired
differences with their intervals (at the level of each Holm-corrected verdict, `bench.stats`)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agents.backends import describe_backend

HEADLINE = ("hit@1", "ndcg@5", "mrr", "avg_hr")
"""Metrics plotted in report.png."""


def _import_plotting() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: F401
    from matplotlib.figure import Figure  # noqa: F401


def preload_plotting() -> threading.Thread:
    """Import matplotlib in a background thread while the run ranks (a third of a second on 2 cores
    that would otherwise sit between the last user and the report); join it before plotting. Not a
    daemon: a process leaving early waits for it rather than cutting an import off at shutdown."""
    thread = threading.Thread(target=_import_plotting, name="recgraph-plotting-import", daemon=False)
    thread.start()
    return thread


def _errors(values: list[float], intervals: list[Any]) -> list[list[float]]:
    """matplotlib's asymmetric yerr from [low, high] intervals (0 where there is none)."""
    below = [max(0.0, v - ci[0]) if ci else 0.0 for v, ci in zip(values, intervals, strict=True)]
    above = [max(0.0, ci[1] - v) if ci else 0.0 for v, ci in zip(values, intervals, strict=True)]
    return [below, above]


def write_report_png(
    out: Path, dataset: str, protocol: dict[str, Any], methods: dict, comparisons: dict | None = None
) -> Path:
    """Write `<out>/report.png`: headline metrics per method with 95% CIs and, when there is a
    reference, a second panel of paired differences against it with their intervals (at the level of
    each verdict; none drawn where too few users bound one)."""
    import textwrap

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = list(methods)
    differences = (comparisons or {}).get("methods") or {}
    width = 0.8 / len(HEADLINE)
    panels = 2 if differences else 1
    size = (max(6, 0.9 * len(names) + 2), 4.2 * panels)
    # Figure + Agg canvas, not pyplot: no global figure manager to import or close. The constrained
    # layout is solved inside the one draw that saving does (tight_layout and a tight bounding box
    # each drew the figure once more).
    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(panels, 1, squeeze=False)  # stacked: readable when wide
    left = axes[0][0]
    positions = np.arange(len(names))
    for offset, metric in enumerate(HEADLINE):
        values = [methods[n].get(metric, 0.0) for n in names]
        intervals = [methods[n].get(f"{metric}_ci") for n in names]
        errors = _errors(values, intervals)
        left.bar(positions + offset * width, values, width, yerr=errors, capsize=2, label=metric)
    left.set_xticks(positions + width * (len(HEADLINE) - 1) / 2, names, rotation=20)
    left.set_ylim(0, 1.05)
    left.set_title("headline metrics (error bars: 95% bootstrap CI over users)", fontsize=9)
    left.legend(fontsize=8)
    if differences:
        right = axes[1][0]
        others = list(differences)
        spots = np.arange(len(others))
        for offset, metric in enumerate(HEADLINE):
            rows = [differences[n].get(metric) or {} for n in others]
            values = [row.get("difference", 0.0) for row in rows]
            intervals = [row.get("ci") for row in rows]
            errors = _errors(values, intervals)
            right.bar(spots + offset * width, values, width, yerr=errors, capsize=2, label=metric)
            for spot, value, row in zip(spots, values, rows, strict=True):  # verdict, across the 0 line
                where = "top" if value >= 0 else "bottom"
                marker = row.get("marker", "")
                right.text(spot + offset * width, 0.0, marker, ha="center", va=where, fontsize=9)
        right.use_sticky_edges = False
        right.margins(y=0.08)
        right.axhline(0.0, color="black", linewidth=0.8)
        right.set_xticks(spots + width * (len(HEADLINE) - 1) / 2, others, rotation=20)
        right.set_title(
            f"paired difference vs {comparisons['reference']} (interval at the level of its Holm-corrected "
            "verdict: it excludes 0 exactly when marked ▲ or ▼)",
            fontsize=9,
        )
        right.legend(fontsize=8)
    title = (
        f"{dataset} · {protocol['scenario']} · N={protocol['candidates']} · "
        f"{len(names)} methods · backend: {describe_backend(protocol['llm'])}"
    )
    # ~12 characters of 9-pt text per inch: wrap to the figure's width, and save the title's box too
    figure.suptitle(textwrap.fill(title, int(figure.get_figwidth() * 12)), fontsize=9)
    path = out / "report.png"
    figure.savefig(path, dpi=110)
    return path
