"""report.png: headline metrics per method with 95% CIs; against a reference, paired differences
with their intervals (at the level of each Holm-corrected verdict, `bench.stats.significance`);
and ndcg@5 against LLM calls (and tokens) per user with the Pareto frontier (bench/report/quality_cost.py)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.backends import describe_backend
from bench.report.quality_cost import quality_cost
from bench.report.quality_cost_png import draw_quality_cost

if TYPE_CHECKING:  # matplotlib is imported when a report is drawn (`preload_plotting`)
    from matplotlib.figure import Figure

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


def _draw_verdicts(axes: Any, verdicts: dict[tuple[str, bool], list[float]]) -> None:
    """Each bar's verdict marker on the 0 line, on the side away from its bar: one scatter per marker
    and side (a glyph path drawn ~90 times costs a fraction of ~90 text objects)."""
    from matplotlib.transforms import offset_copy

    for (marker, upwards), xs in verdicts.items():
        shifted = offset_copy(axes.transData, fig=axes.figure, y=-5.0 if upwards else 5.0, units="points")
        axes.scatter(xs, [0.0] * len(xs), s=42, marker=f"${marker}$", color="black", linewidths=0,
                     offset_transform=shifted)  # fmt: skip


def write_report_png(
    out: Path, dataset: str, protocol: dict[str, Any], methods: dict, comparisons: dict | None = None
) -> Path:
    """Write `<out>/report.png` (`report_figure`), drawn once, by the save."""
    path = out / "report.png"
    figure = report_figure(dataset, protocol, methods, comparisons)
    # zlib level 1, not PIL's 6: ~25 ms less on 24 methods for a ~10% larger file
    figure.savefig(path, dpi=110, pil_kwargs={"compress_level": 1})
    return path


def report_figure(
    dataset: str, protocol: dict[str, Any], methods: dict, comparisons: dict | None = None
) -> Figure:
    """report.png's figure, not yet drawn: headline metrics per method with 95% CIs; when there is a
    reference, a panel of paired differences against it with their intervals (at the level of each
    verdict; none drawn where too few users bound one); then ndcg@5 against calls per user (planned
    with the heuristic backend, measured otherwise) and, for a measured run, against tokens per user
    beside it, the Pareto frontier marked (bench/report/quality_cost_png.py)."""
    import textwrap

    import numpy as np
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = list(methods)
    differences = (comparisons or {}).get("methods") or {}
    width = 0.8 / len(HEADLINE)
    block = quality_cost(methods, protocol["llm"])
    layout = [["metrics"] * 2, *([["differences"] * 2] if differences else [])]
    layout.append(["calls", "tokens"] if block["tokens_axis"] else ["calls"] * 2)  # tokens: measured only
    size = (max(6, 0.9 * len(names) + 2), 4.2 * len(layout))
    # Figure + Agg canvas, not pyplot: no global figure manager to import or close. The constrained
    # layout is solved inside the one draw that saving does (tight_layout and a tight bounding box
    # each drew the figure once more).
    figure = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplot_mosaic(layout)  # stacked: readable when wide; the cost panels side by side
    left = axes["metrics"]
    wrap = int(figure.get_figwidth() * 12)  # ~12 characters of 9-pt text per inch: titles wrap to fit
    positions = np.arange(len(names))
    for offset, metric in enumerate(HEADLINE):
        values = [methods[n].get(metric, 0.0) for n in names]
        intervals = [methods[n].get(f"{metric}_ci") for n in names]
        errors = _errors(values, intervals)
        left.bar(positions + offset * width, values, width, yerr=errors, capsize=2, label=metric)
    left.set_xticks(positions + width * (len(HEADLINE) - 1) / 2, names, rotation=20)
    left.set_ylim(0, 1.2)  # room above 1.0 for the legend: placed, not searched for ("best" is costly)
    left.set_yticks(np.linspace(0.0, 1.0, 6))
    left.set_title("headline metrics (error bars: 95% bootstrap CI over users)", fontsize=9)
    left.legend(fontsize=8, loc="upper right", ncols=len(HEADLINE))
    if differences:
        right = axes["differences"]
        others = list(differences)
        spots = np.arange(len(others))
        verdicts: dict[tuple[str, bool], list[float]] = {}  # (marker, bar upwards) -> bar positions
        for offset, metric in enumerate(HEADLINE):
            rows = [differences[n].get(metric) or {} for n in others]
            values = [row.get("difference", 0.0) for row in rows]
            intervals = [row.get("ci") for row in rows]
            errors = _errors(values, intervals)
            right.bar(spots + offset * width, values, width, yerr=errors, capsize=2, label=metric)
            for spot, value, row in zip(spots, values, rows, strict=True):  # verdict, across the 0 line
                if row.get("marker"):
                    verdicts.setdefault((row["marker"], value >= 0), []).append(spot + offset * width)
        _draw_verdicts(right, verdicts)
        right.use_sticky_edges = False
        right.margins(y=0.08)
        right.axhline(0.0, color="black", linewidth=0.8)
        right.set_xticks(spots + width * (len(HEADLINE) - 1) / 2, others, rotation=20)
        title = (
            f"paired difference vs {comparisons['reference']} (interval at the level of its Holm-corrected "
            "verdict: it excludes 0 exactly when marked ▲ or ▼; colours as above)"
        )
        right.set_title(textwrap.fill(title, wrap), fontsize=9)
    draw_quality_cost(axes["calls"], axes.get("tokens"), block, wrap // 2 if "tokens" in axes else wrap)
    title = (
        f"{dataset} · {protocol['scenario']} · N={protocol['candidates']} · "
        f"{len(names)} methods · backend: {describe_backend(protocol['llm'])}"
    )
    figure.suptitle(textwrap.fill(title, wrap), fontsize=9)
    return figure
