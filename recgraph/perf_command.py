"""`recgraph bench perf`: speed of each method's recommendation graph on the loopback LLM."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.table import Table

from recgraph.commands import console, protocol_from_args


def perf(args: argparse.Namespace) -> int:
    """Measure overhead, critical path, throughput and tokens; write `<out>/perf.json`."""
    from bench.perf import measure_method, perf_context
    from bench.protocol import plan_cases
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
    with llm_session(args, latency=args.latency) as (context, server):
        context = perf_context(context, server.base_url)
        for method in methods:
            console.print(f"perf: {method} on {len(cases)} users …")
            report["methods"][method] = measure_method(
                method, cases, args.scenario, context, args.concurrency, args.latency
            )
    out = Path(args.out or "runs/perf")
    out.mkdir(parents=True, exist_ok=True)
    (out / "perf.json").write_text(json.dumps(report, indent=2) + "\n")
    console.print(perf_table(report))
    for method, row in report["methods"].items():
        if "tokens_per_user_by_stage" in row:
            console.print(stage_table(method, row))
    console.print(f"wrote {out}/perf.json")
    return 0


def perf_table(report: dict) -> Table:
    """perf.json as a console table."""
    table = Table(title=f"bench perf · latency {report['latency_s']} s · concurrency {report['concurrency']}")
    columns = (
        "overhead_ms_per_user",
        "overhead_ms_per_user_alone",
        "critical_path_depth",
        "throughput_users_per_s",
        "ideal_users_per_s",
        "efficiency",
        "input_tokens_per_user",
        "llm_calls_per_user",
    )
    table.add_column("method", no_wrap=True)
    for column in columns:
        table.add_column(column.replace("_per_", "/").replace("_", " "), justify="right")
    for method, row in report["methods"].items():
        cells = [f"{row[c]:.3f}" if isinstance(row[c], float) else str(row[c]) for c in columns]
        table.add_row(method, *cells)
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
