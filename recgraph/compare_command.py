"""`recgraph compare RUN_A RUN_B`: two finished bench runs, user by user, method by method."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from bench.stats.compare import RunComparison

DEFAULT_METRICS = "hit@1,ndcg@5,mrr,avg_hr"

console = Console(width=None if sys.stdout.isatty() else 160)
warnings_console = Console(stderr=True, width=None if sys.stderr.isatty() else 160)


def add_compare_parser(commands: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the `compare` subcommand on the CLI's subparsers."""
    parser = commands.add_parser(
        "compare",
        help="compare two finished bench runs user by user (paired; only --seed may differ)",
    )
    parser.add_argument("run_a", metavar="RUN_A", help="the first run's --out folder (the baseline)")
    parser.add_argument("run_b", metavar="RUN_B", help="the second run's --out folder (B − A is shown)")
    parser.add_argument(
        "--metrics",
        default=DEFAULT_METRICS,
        help=f"comma-separated metrics, or all (default {DEFAULT_METRICS})",
    )
    parser.set_defaults(handler=compare)
    return parser


def compare(args: argparse.Namespace) -> int:
    """Load both runs, refuse different protocols, print warnings and the paired table."""
    from bench.stats.compare import compare_runs, load_run, run_metrics

    run_a, run_b = load_run(args.run_a), load_run(args.run_b)
    metrics = selected_metrics(run_metrics(run_a), args.metrics)
    result = compare_runs(run_a, run_b, metrics)
    for line in result.warnings:
        warnings_console.print(f"[yellow]warning:[/] {escape(line)}")
    console.print(comparison_table(result, metrics))
    return 0


def selected_metrics(available: list[str], text: str) -> list[str]:
    """The metrics to compare: `all`, or the named ones (refusing names the run does not have)."""
    from bench.stats.compare import RunFolderError

    if text.strip() == "all":
        return available
    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [n for n in names if n not in available]
    if unknown or not names:
        raise RunFolderError(
            f"unknown metric {unknown[0] if unknown else text!r}; available: {', '.join(available)}"
        )
    return names


def comparison_table(result: RunComparison, metrics: list[str]) -> Table:
    """One row per (method, metric): A, B, B − A with its interval at the verdict's Holm level, p, Holm
    p and the verdict."""
    from agents.backends import describe_backend
    from bench.stats import significance as stats

    a, b = result.a, result.b
    protocol = a.protocol
    backend = describe_backend(protocol.get("llm", ""))
    table = Table(
        title=f"B = {b.path.parent} vs A = {a.path.parent} · {protocol.get('dataset')} · "
        f"{protocol.get('scenario')} · N={protocol.get('candidates')} · {backend}",
        caption=f"Δ = B − A, mean over paired users; p: paired permutation test (sign flips, "
        f"{stats.PERMUTATION_RESAMPLES} resamples or exact, seed {stats.SEED}); "
        f"{stats.MARKERS[stats.BETTER]} / {stats.MARKERS[stats.WORSE]}: Holm-adjusted p < {stats.ALPHA} "
        f"across methods; {stats.MARKERS[stats.SAME]} no detectable difference; CI: the differences the "
        "same test does not reject at the level Holm held that row to (level), so it excludes 0 exactly "
        "when the verdict is ▲ or ▼ (unbounded: too few users to reject any difference at that level)",
    )
    columns = ("method", "users", "metric", "A", "B", "Δ (B − A)", "CI", "level", "p", "p (Holm)", "verdict")
    for column in columns:
        table.add_column(column, justify="left" if column in ("method", "metric", "verdict") else "right")
    for method, row in result.methods.items():
        for index, metric in enumerate(metrics):
            cell = row.metrics[metric]
            table.add_row(
                method if index == 0 else "",
                str(row.paired) if index == 0 else "",
                metric,
                f"{row.mean_a[metric]:.4f}",
                f"{row.mean_b[metric]:.4f}",
                f"{cell.difference:+.4f}",
                format_ci(cell.ci, cell.users),
                f"{100 * cell.ci_level:.1f}%",
                f"{cell.p_value:.4f}",
                f"{cell.p_holm:.4f}",
                f"{stats.MARKERS[cell.verdict]} {cell.verdict}",
                end_section=index == len(metrics) - 1,
            )
    return table


def format_ci(ci: list[float] | None, users: int = 2) -> str:
    """[low, high] with signs; "(−∞, +∞)" when too few users bound it, "n/a" for fewer than 2 users."""
    if ci is None:
        return "(−∞, +∞)" if users >= 2 else "n/a"
    return f"[{ci[0]:+.4f}, {ci[1]:+.4f}]"
