"""The console's view of a bench run: the headline table under headers that fit 100 columns, the
legend explaining them, what each method ran with, the model-share warning and the paired
differences (report.md and metrics.json are written by bench/report/outputs.py)."""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table

from agents.backends import describe_backend
from bench.report.one_time_work import one_time_line
from bench.report.outputs import _cell, _difference, _usage, comparison_note, metric_columns
from bench.report.png import HEADLINE
from bench.report.quality_cost import frontier_line, quality_cost
from bench.run.ran_with import ran_with
from bench.stats.fallbacks import FallbackCheck, fallback_lines, model_share_lines

RICH_USAGE = ("users", "llm_attempts", "llm_calls", "fallback_share", "model@5", "seconds_per_user")
"""Usage columns of the console table (report.md has them all)."""
SHORT_NAMES = {
    "llm_attempts": "req",
    "llm_calls": "ans",
    "fallback_share": "fb%",
    "seconds_per_user": "s/u",
}
"""Console headers short enough for a 100-column terminal; `RICH_LEGEND` explains them."""
RICH_LEGEND = (
    "req: LLM requests sent · ans: requests the model answered · fb%: agent answers from fallbacks, of "
    "those asked of an LLM · model@5: top-5 positions the model chose itself (the rest: repair or "
    "fallback) · s/u: seconds per user · –: no LLM asked · (ref): the markers' reference · all metrics "
    "with their CIs: report.md"
)
"""The one line under the console table explaining its abbreviations."""


def rich_table(
    dataset: str, protocol: dict[str, Any], methods: dict, comparisons: dict | None = None
) -> Table:
    """The comparison table for the console: the headline metrics, each with its marker against the
    reference, and the usage columns, under headers that fit 100 columns (`RICH_LEGEND`)."""
    table = Table(
        title=f"{dataset} · {protocol['scenario']} · {describe_backend(protocol['llm'])}",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        pad_edge=False,
    )
    available = metric_columns(methods)
    metrics = [m for m in HEADLINE if m in available]
    table.add_column("method", no_wrap=True)
    for column in (*metrics, *RICH_USAGE):
        table.add_column(SHORT_NAMES.get(column, column), justify="right", no_wrap=True)
    for name, row in methods.items():
        cells = [_cell(row, name, c, comparisons, 3, False) for c in metrics]
        cells += [_usage(row, c, 2 if c == "seconds_per_user" else 3) for c in RICH_USAGE]
        label = f"{name} (ref)" if comparisons and comparisons.get("reference") == name else name
        table.add_row(label, *cells)
    return table


def differences_table(comparisons: dict | None) -> Table | None:
    """Paired differences against the reference (headline metrics) for the console, each interval
    on the line under its difference and marker."""
    rows = (comparisons or {}).get("methods") or {}
    if not rows:
        return None
    title = f"paired difference vs {comparisons['reference']} (interval at the verdict's Holm level)"
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("method", no_wrap=True)
    for metric in HEADLINE:
        table.add_column(f"Δ {metric}", justify="right", no_wrap=True)
    for name, row in rows.items():
        table.add_row(name, *(_difference(row.get(m), 3, lines=True) for m in HEADLINE))
    return table


def rich_report(
    dataset: str,
    protocol: dict[str, Any],
    methods: dict,
    comparisons: dict | None = None,
    fallbacks: FallbackCheck | None = None,
) -> Group:
    """What `recgraph bench` prints: the fallback warning (if any), the table, the line explaining its
    headers, the model-share warning (if any), the Pareto frontier of ndcg@5 against calls (and
    tokens) per user, the paired differences, the note on markers and the one-time work's sums."""
    parts: list[Any] = [f"[bold yellow]{escape(line)}[/]" for line in fallback_lines(fallbacks)]
    parts.append(rich_table(dataset, protocol, methods, comparisons))
    parts.append(f"[dim]{escape(RICH_LEGEND)}[/]")
    parts += [f"ran with {escape(line)}" for line in ran_with(methods)]
    parts += [f"[bold yellow]{escape(line)}[/]" for line in model_share_lines(fallbacks)]
    parts.append(escape(frontier_line(quality_cost(methods, protocol["llm"]))))
    differences = differences_table(comparisons)
    if differences is not None:
        parts.append(differences)
    note = comparison_note(comparisons)
    if note:
        parts.append(escape(note))
    work = one_time_line(methods)
    if work:
        parts.append(f"[dim]{escape(work)}[/]")
    return Group(*parts)
