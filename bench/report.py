"""The benchmark's outputs: metrics.json, report.md, report.png and the console table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.table import Table

from agents.backends import describe_backend

HEADLINE = ("hit@1", "ndcg@5", "mrr", "avg_hr")
"""Metrics plotted in report.png."""
COST_COLUMNS = ("llm_calls", "input_tokens", "output_tokens", "fallbacks", "repairs")


def metric_columns(methods: dict[str, dict[str, Any]]) -> list[str]:
    """Quality metric names in report order."""
    first = next(iter(methods.values()), {})
    keys = [k for k in first if "@" in k]
    return [*keys, "mrr", "avg_hr"]


def write_metrics(
    out: Path, dataset: str, protocol: dict[str, Any], methods: dict, server_stats: dict | None = None
) -> Path:
    """Write `<out>/metrics.json` in protocol.md's schema (+ the simulator's fault counts)."""
    document: dict[str, Any] = {
        "dataset": dataset,
        "protocol": {k: protocol[k] for k in ("candidates", "seed", "scenario", "users", "llm")},
        "methods": methods,
    }
    if server_stats is not None:
        document["sim_server"] = server_stats
    path = out / "metrics.json"
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def markdown_table(methods: dict[str, dict[str, Any]]) -> str:
    """The comparison table in Markdown."""
    columns = [*metric_columns(methods), "users", *COST_COLUMNS, "seconds_per_user"]
    lines = ["| method | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for name, row in methods.items():
        cells = [_format(row.get(c)) for c in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _format(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def write_report_md(out: Path, dataset: str, protocol: dict[str, Any], methods: dict) -> Path:
    """Write `<out>/report.md`."""
    text = (
        f"# recgraph bench — {dataset}\n\n"
        f"- backend: {describe_backend(protocol['llm'])}\n"
        f"- scenario: {protocol['scenario']}; candidates per user: {protocol['candidates']}; "
        f"users: {protocol['users']} requested; seed: {protocol['seed']}\n\n"
        f"{markdown_table(methods)}\n\n![headline metrics](report.png)\n"
    )
    path = out / "report.md"
    path.write_text(text)
    return path


def write_report_png(out: Path, dataset: str, protocol: dict[str, Any], methods: dict) -> Path:
    """Write `<out>/report.png`: grouped bars of the headline metrics per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(methods)
    positions = np.arange(len(names))
    width = 0.8 / len(HEADLINE)
    figure, axes = plt.subplots(figsize=(max(6, 1.4 * len(names) + 2), 4))
    for offset, metric in enumerate(HEADLINE):
        values = [methods[n].get(metric, 0.0) for n in names]
        axes.bar(positions + offset * width, values, width, label=metric)
    axes.set_xticks(positions + width * (len(HEADLINE) - 1) / 2, names, rotation=20)
    axes.set_ylim(0, 1)
    axes.set_title(
        f"{dataset} · {protocol['scenario']} · N={protocol['candidates']} · "
        f"{describe_backend(protocol['llm']).split(':')[0]}",
        fontsize=9,
    )
    axes.legend(fontsize=8)
    figure.tight_layout()
    path = out / "report.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def rich_table(dataset: str, protocol: dict[str, Any], methods: dict) -> Table:
    """The comparison table for the console."""
    table = Table(title=f"{dataset} · {protocol['scenario']} · {describe_backend(protocol['llm'])}")
    columns = [*metric_columns(methods), "users", "llm_calls", "fallbacks", "seconds_per_user"]
    table.add_column("method", no_wrap=True)
    for column in columns:
        table.add_column(column.replace("seconds_per_user", "s/user"), justify="right")
    for name, row in methods.items():
        table.add_row(name, *(_format(row.get(c), 3) for c in columns))
    return table


OBSERVED_AS = {
    "http_429": ("errors", "http_429"),
    "http_500": ("errors", "http_500"),
    "timeout": ("errors", "timeout"),
    "malformed_json": ("errors", "malformed_json"),
    "truncated": ("errors", "truncated"),
    "unknown_ids": ("repair_kinds", "unknown_id"),
    "duplicate_ids": ("repair_kinds", "duplicate_id"),
}
"""Simulator fault kind -> where the client counts it (echo is a valid answer: not seen)."""


def observed_faults(methods: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Client-side counts of each simulator fault kind, over all methods."""
    counts = dict.fromkeys(OBSERVED_AS, 0)
    for method_row in methods.values():
        for row in (method_row, method_row.get("stage_w") or {}):  # MemRec's warm-up writes call too
            for kind, (table, key) in OBSERVED_AS.items():
                counts[kind] += row.get(table, {}).get(key, 0)
    return counts


def fault_table(server_stats: dict[str, Any], methods: dict[str, dict[str, Any]]) -> Table:
    """Faults the simulator injected next to what the client observed."""
    table = Table(title=f"simulator: {server_stats.get('requests', 0)} requests")
    for column in ("fault", "injected", "observed by client"):
        table.add_column(column)
    observed = observed_faults(methods)
    for kind, injected in sorted(server_stats.get("faults", {}).items()):
        table.add_row(kind, str(injected), str(observed.get(kind, "not observable")))
    return table
