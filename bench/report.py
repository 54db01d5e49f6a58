"""The benchmark's outputs: metrics.json, report.md, report.png and the console table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from agents.backends import describe_backend
from bench import stats
from bench.crash import failure_markdown
from bench.eligibility import describe_candidates
from bench.fallbacks import FALLBACK_NOTE, FallbackCheck, fallback_lines, format_share
from bench.fault_report import fault_table as fault_table  # re-exported: the report's parts
from bench.fault_report import observed_faults as observed_faults
from bench.report_png import HEADLINE
from bench.report_png import write_report_png as write_report_png

COST_COLUMNS = (
    "llm_attempts",
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "fallbacks",
    "fallback_share",
    "repairs",
)
"""Usage columns of report.md: requests sent, requests answered, tokens, agent answers from fallbacks
(count and share of the answers asked of an LLM) and repaired answers."""


def metric_columns(methods: dict[str, dict[str, Any]]) -> list[str]:
    """Quality metric names in report order."""
    first = next(iter(methods.values()), {})
    keys = [k for k in first if "@" in k and not k.endswith("_ci")]
    return [*keys, "mrr", "avg_hr"]


def write_metrics(
    out: Path,
    dataset: str,
    protocol: dict[str, Any],
    methods: dict,
    server_stats: dict | None = None,
    comparisons: dict | None = None,
    fallbacks: FallbackCheck | None = None,
    *,
    failed: dict[str, Any] | None = None,
    candidates: dict[str, Any] | None = None,
) -> Path:
    """Write `<out>/metrics.json` in protocol.md's schema (+ the simulator's fault counts).

    With `comparisons` (bench.compare.add_statistics) it also holds `statistics` (how intervals
    and tests were computed) and `comparisons` (every method against the reference); with
    `fallbacks` the thresholds and the methods above them (`fallbacks`); with `failed` the method
    that stopped the run (bench.crash.failure_block), which `methods` then leaves out; with
    `candidates` how candidates were made and which users were eligible (bench.eligibility).
    """
    document: dict[str, Any] = {
        "dataset": dataset,
        "protocol": {k: protocol[k] for k in ("candidates", "seed", "scenario", "users", "llm")},
        "methods": methods,
    }
    if protocol.get("mix_candidates"):
        document["protocol"]["mix_candidates"] = True
    if candidates is not None:
        document["candidates"] = candidates
    if server_stats is not None:
        document["sim_server"] = server_stats
    if comparisons is not None:
        document["statistics"] = stats.settings()
        document["comparisons"] = comparisons
    if fallbacks is not None:
        document["fallbacks"] = fallbacks.as_dict()
    if failed is not None:
        document["failed"] = failed
    path = out / "metrics.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def markdown_table(methods: dict[str, dict[str, Any]], comparisons: dict | None = None) -> str:
    """The comparison table in Markdown: each metric with its 95% CI and its marker vs the reference."""
    metrics = metric_columns(methods)
    columns = [*metrics, "users", *COST_COLUMNS, "seconds_per_user"]
    lines = ["| method | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in methods.items():
        cells = [
            _cell(row, name, c, comparisons, 4, True) if c in metrics else _usage(row, c, 4) for c in columns
        ]
        lines.append(f"| {_label(name, comparisons)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _label(name: str, comparisons: dict | None) -> str:
    return f"{name} (reference)" if comparisons and comparisons.get("reference") == name else name


def _cell(row: dict, name: str, metric: str, comparisons: dict | None, digits: int, with_ci: bool) -> str:
    """A metric's value, optionally its CI, and its marker against the reference."""
    text = _format(row.get(metric), digits)
    interval = row.get(f"{metric}_ci")
    if with_ci and interval:
        text += f" [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"
    paired = ((comparisons or {}).get("methods") or {}).get(name, {}).get(metric)
    return f"{text} {paired['marker']}" if paired else text


def _difference(paired: dict | None, digits: int) -> str:
    """`+0.0123 [-0.0100, +0.0300] ≈` for one paired comparison."""
    if not paired:
        return ""
    interval = paired["ci"]
    bounds = f" [{interval[0]:+.{digits}f}, {interval[1]:+.{digits}f}]" if interval else ""
    return f"{paired['difference']:+.{digits}f}{bounds} {paired['marker']}"


def comparison_note(comparisons: dict | None) -> str:
    """Which reference, how it was chosen, and what the markers and intervals mean."""
    if not comparisons:
        return ""
    settings = stats.settings()
    if comparisons.get("reference") is None:
        return f"No paired comparisons: {comparisons.get('reference_chosen')}."
    compared = len(comparisons.get("methods") or {})
    return (
        f"Reference: {comparisons['reference']} — {comparisons['reference_chosen']}. "
        f"Intervals: {settings['interval']}, {stats.BOOTSTRAP_RESAMPLES} resamples, seed {stats.SEED}. "
        f"Markers: paired two-sided permutation test of the per-user difference, Holm-corrected across the "
        f"{compared} compared methods per metric; {stats.MARKERS[stats.BETTER]} better / "
        f"{stats.MARKERS[stats.WORSE]} worse than the reference at adjusted p < {stats.ALPHA}, "
        f"{stats.MARKERS[stats.SAME]} no detectable difference."
    )


def differences_markdown(comparisons: dict | None) -> str:
    """Paired differences vs the reference (headline metrics) in Markdown, with Holm p-values."""
    rows = (comparisons or {}).get("methods") or {}
    if not rows:
        return ""
    head = [f"Δ {m} [95% CI]" for m in HEADLINE] + [f"p_holm {m}" for m in HEADLINE]
    lines = [
        f"Paired differences (method − {comparisons['reference']}):\n",
        "| method | " + " | ".join(head) + " |",
        "|---" * (len(head) + 1) + "|",
    ]
    for name, row in rows.items():
        cells = [_difference(row.get(m), 4) for m in HEADLINE]
        cells += [f"{row[m]['p_holm']:.4f}" if m in row else "" for m in HEADLINE]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _usage(row: dict, column: str, digits: int) -> str:
    """A usage cell: the fallback share as a percentage ("–" without LLM answers), others as they are."""
    if column == "fallback_share":
        return format_share(row.get(column))
    return _format(row.get(column), digits)


def _format(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def degraded_markdown(methods: dict) -> str:
    """What each method switched off for lack of a dataset field (metrics.json `degraded`), or ""."""
    rows = [f"- {name}: {'; '.join(row['degraded'])}" for name, row in methods.items() if row.get("degraded")]
    return "Switched off for this dataset (a field it lacks):\n\n" + "\n".join(rows) if rows else ""


def write_report_md(
    out: Path,
    dataset: str,
    protocol: dict[str, Any],
    methods: dict,
    comparisons: dict | None = None,
    fallbacks: FallbackCheck | None = None,
    *,
    failed: dict[str, Any] | None = None,
    candidates: dict[str, Any] | None = None,
) -> Path:
    """Write `<out>/report.md` (with intervals, markers and paired differences when given, the
    fallback warning above the table when a method is above its threshold, the method that
    stopped the run when one `failed`, and how `candidates` were made and who was eligible)."""
    parts = (comparison_note(comparisons), differences_markdown(comparisons), degraded_markdown(methods))
    extra = "".join(f"{part}\n\n" for part in parts if part)
    warning = "".join(f"> **{line}**\n\n" for line in fallback_lines(fallbacks))
    if failed:
        warning = f"{failure_markdown(failed)}\n\n{warning}"
    candidates_line = f"- {describe_candidates(candidates)}\n" if candidates else ""
    text = (
        f"# recgraph bench — {dataset}\n\n"
        f"- backend: {describe_backend(protocol['llm'])}\n"
        f"- scenario: {protocol['scenario']}; candidates per user: {protocol['candidates']}; "
        f"users: {protocol['users']} requested; seed: {protocol['seed']}\n"
        f"{candidates_line}"
        f"- {FALLBACK_NOTE}\n\n"
        f"{warning}{markdown_table(methods, comparisons)}\n\n{extra}![headline metrics](report.png)\n"
    )
    path = out / "report.md"
    path.write_text(text)
    return path


RICH_USAGE = ("llm_attempts", "llm_calls", "fallbacks", "fallback_share")
"""Usage columns of the console table."""
SHORT_NAMES = {
    "llm_attempts": "attempts",
    "llm_calls": "calls",
    "fallback_share": "fallback",
    "seconds_per_user": "s/user",
}


def rich_table(
    dataset: str, protocol: dict[str, Any], methods: dict, comparisons: dict | None = None
) -> Table:
    """The comparison table for the console (each metric with its marker against the reference)."""
    table = Table(title=f"{dataset} · {protocol['scenario']} · {describe_backend(protocol['llm'])}")
    metrics = metric_columns(methods)
    columns = [*metrics, "users", *RICH_USAGE, "seconds_per_user"]
    table.add_column("method", no_wrap=True)
    for column in columns:
        table.add_column(SHORT_NAMES.get(column, column), justify="right")
    for name, row in methods.items():
        cells = [
            _cell(row, name, c, comparisons, 3, False) if c in metrics else _usage(row, c, 3) for c in columns
        ]
        table.add_row(_label(name, comparisons), *cells)
    return table


def differences_table(comparisons: dict | None) -> Table | None:
    """Paired differences against the reference (headline metrics) for the console."""
    rows = (comparisons or {}).get("methods") or {}
    if not rows:
        return None
    table = Table(title=f"paired difference vs {comparisons['reference']} (95% CI, Holm-corrected verdict)")
    table.add_column("method", no_wrap=True)
    for metric in HEADLINE:
        table.add_column(f"Δ {metric}", justify="right")
    for name, row in rows.items():
        table.add_row(name, *(_difference(row.get(m), 3) for m in HEADLINE))
    return table


def rich_report(
    dataset: str,
    protocol: dict[str, Any],
    methods: dict,
    comparisons: dict | None = None,
    fallbacks: FallbackCheck | None = None,
) -> Group:
    """What `recgraph bench` prints: the fallback warning (if any), the table, the paired
    differences and the note on markers."""
    parts: list[Any] = [f"[bold yellow]{escape(line)}[/]" for line in fallback_lines(fallbacks)]
    parts.append(rich_table(dataset, protocol, methods, comparisons))
    differences = differences_table(comparisons)
    if differences is not None:
        parts.append(differences)
    note = comparison_note(comparisons)
    if note:
        parts.append(escape(note))
    return Group(*parts)
