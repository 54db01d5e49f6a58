"""`recgraph bench perf`: speed of each method's recommendation graph on the loopback LLM."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from rich.table import Table

from recgraph.protocol_args import protocol_from_args
from recgraph.terminal import console


def perf(args: argparse.Namespace) -> int:
    """Measure overhead, critical path, throughput and tokens; write `<out>/perf.json`."""
    from bench.protocol.plan import plan_cases
    from bench.run.perf import measure_method, perf_context
    from graphs.registry import parse_methods
    from recgraph.llm_session import llm_session
    from world.environment import get_environment
    from world.errors import ProtocolError

    if args.latency < 0 or args.concurrency < 1:
        raise ProtocolError("--latency must be >= 0 and --concurrency >= 1")
    methods = parse_methods(args.methods)
    protocol = protocol_from_args(args, "sim")
    cases = plan_cases(get_environment(args.dataset), protocol)
    args.llm, args.faults = "sim", 0.0
    report: dict = {"latency_s": args.latency, "concurrency": args.concurrency, "methods": {}}
    # Wall-clock figures depend on what else the machine runs: the load is part of the result.
    report["machine"] = {"cpus": os.cpu_count(), "load_avg_start": list(os.getloadavg())}
    with llm_session(args, latency=args.latency) as (context, server):
        context = perf_context(context, server.base_url, args.latency)
        for method in methods:
            console.print(f"perf: {method} on {len(cases)} users …")
            report["methods"][method] = measure_method(
                method, cases, args.scenario, context, args.concurrency, args.latency
            )
    report["machine"]["load_avg_end"] = list(os.getloadavg())
    out = Path(args.out or "runs/perf")
    out.mkdir(parents=True, exist_ok=True)
    (out / "perf.json").write_text(json.dumps(report, indent=2) + "\n")
    console.print(perf_table(report))
    extras = extras_table(report)
    if extras.row_count:
        console.print(extras)
    for method, row in report["methods"].items():
        if "tokens_per_user_by_stage" in row:
            console.print(stage_table(method, row))
    console.print(f"wrote {out}/perf.json")
    return 0


PERF_COLUMNS = (
    "overhead_ms_per_user",
    "overhead_ms_per_user_alone",
    "critical_path_depth",
    "throughput_users_per_s",
    "ideal_users_per_s",
    "efficiency",
    "client_floor_users_per_s",
    "efficiency_vs_client",
    "input_tokens_per_user",
    "llm_calls_per_user",
)
"""The main table's columns (every method has them)."""
STAGE_KEYS = frozenset({"tokens_per_user_by_stage", "paper_table_8_tokens"})
"""Figures the stage table shows, left out of the extras table."""


def cell(value: object) -> str:
    """One figure as table text (floats to 3 decimals, a missing one as a dash)."""
    if value is None:
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def perf_table(report: dict) -> Table:
    """perf.json as a console table."""
    title = f"bench perf · latency {report['latency_s']} s · concurrency {report['concurrency']}"
    if machine := report.get("machine"):
        loads = " → ".join(f"{m[0]:.1f}" for m in (machine["load_avg_start"], machine["load_avg_end"]))
        title += f" · {machine['cpus']} CPUs, 1-min load {loads}"
    table = Table(title=title)
    table.add_column("method", no_wrap=True)
    for column in PERF_COLUMNS:
        table.add_column(column.replace("_per_", "/").replace("_", " "), justify="right")
    for method, row in report["methods"].items():
        table.add_row(method, *(cell(row.get(c)) for c in PERF_COLUMNS))
    return table


def flat_figures(row: dict, prefix: str = "") -> list[tuple[str, object]]:
    """A row's scalar figures with nested mappings flattened to dotted names (lists left out)."""
    figures: list[tuple[str, object]] = []
    for key, value in row.items():
        if isinstance(value, dict):
            figures.extend(flat_figures(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            figures.append((f"{prefix}{key}", value))
    return figures


def extras_table(report: dict) -> Table:
    """Every figure a method adds beyond the main table (its `perf_extras` hook, the client floor's
    detail, the mean of its per-user `details`), one row each, whatever the method."""
    table = Table(title="bench perf · per-method extras")
    for column, justify in (("method", "left"), ("figure", "left"), ("value", "right")):
        table.add_column(column, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    shown = {*PERF_COLUMNS, "wall_seconds", "users"}
    for method, row in report["methods"].items():
        stage_keys = STAGE_KEYS if "tokens_per_user_by_stage" in row else frozenset()
        extra = {k: v for k, v in row.items() if k not in shown and k not in stage_keys}
        for name, value in flat_figures(extra):
            table.add_row(method, name, cell(value))
    return table


def stage_table(method: str, row: dict) -> Table:
    """A MemRec method's curation latency and tokens per stage next to the paper's Table 8."""
    table = Table(
        title=f"{method}: curation {row['curation_ms_mean']:.2f} ms mean, {row['curation_ms_p95']:.2f} ms p95"
        " per user; tokens per user by stage"
    )
    for column in ("stage", "input", "output", "paper input", "paper output"):
        table.add_column(column, justify="right")
    paper = row["paper_table_8_tokens"]
    for stage, tokens in row["tokens_per_user_by_stage"].items():
        ref = paper.get(stage, {})
        table.add_row(
            stage,
            f"{tokens['input']:.0f}",
            f"{tokens['output']:.0f}",
            str(ref.get("input", "")),
            str(ref.get("output", "")),
        )
    return table
