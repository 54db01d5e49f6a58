"""The benchmark's outputs: metrics.json, report.md, report.png and the console table."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agents.backends import describe_backend
from bench.protocol.eligibility import describe_candidates, describe_cases
from bench.report.call_plan import plan_block, plan_markdown
from bench.report.one_time_work import one_time_markdown
from bench.report.png import HEADLINE
from bench.report.png import preload_plotting as preload_plotting
from bench.report.png import write_report_png as write_report_png
from bench.report.quality_cost import quality_cost, quality_cost_markdown
from bench.report.router_headroom import headroom_markdown
from bench.run.crash import failure_markdown
from bench.run.ran_with import ran_with
from bench.stats import significance as stats
from bench.stats.fallbacks import (
    FALLBACK_NOTE,
    FallbackCheck,
    fallback_lines,
    format_model_share,
    format_share,
    model_share_lines,
)
from bench.stats.fault_report import fault_table as fault_table  # re-exported: the report's parts
from bench.stats.fault_report import observed_faults as observed_faults

if TYPE_CHECKING:
    from bench.cost.planned_calls import PlannedCalls

COST_COLUMNS = (
    "llm_attempts",
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "fallbacks",
    "fallback_share",
    "repairs",
    "model@1",
    "model@5",
    "model@all",
)
"""Usage columns of report.md: requests sent, requests answered, tokens, agent answers from fallbacks
(count and share of the answers asked of an LLM), repaired answers, and the share of the top-1, top-5
and all ranking positions the model chose itself."""
MODEL_SHARE_HEADS = {"model@1": "top1", "model@5": "top5", "model@all": "all"}
"""Model-share columns -> the head of the ranking they count (metrics.json `model_share`)."""


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
    router_headroom: dict[str, Any] | None = None,
    planned: Sequence[PlannedCalls] | None = None,
) -> Path:
    """Write `<out>/metrics.json` in protocol.md's schema (+ the simulator's fault counts).

    With `comparisons` (bench.stats.compare.add_statistics) it also holds `statistics` (how intervals
    and tests were computed) and `comparisons` (every method against the reference); with
    `fallbacks` the thresholds and the methods above them (`fallbacks`); with `failed` the method
    that stopped the run (bench.run.crash.failure_block), which `methods` then leaves out; with
    `candidates` how candidates were made and which users were eligible (bench.protocol.eligibility).
    `quality_cost` is always there: ndcg@5 against calls (and tokens) per user, with the Pareto
    frontier and which cost it is, measured or planned (bench.report.quality_cost). With `router_headroom`
    (bench.report.router_headroom: a router in the run) the routers against the best single method and the
    per-user oracle. With an LLM backend `planned_vs_measured` (bench.report.call_plan: `planned`, the
    probed plan printed before the run, beside what it measured).
    """
    document: dict[str, Any] = {
        "dataset": dataset,
        "protocol": {k: protocol[k] for k in ("candidates", "seed", "scenario", "users", "llm")},
        "methods": methods,
        "quality_cost": quality_cost(methods, protocol["llm"]),
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
    if router_headroom is not None:
        document["router_headroom"] = router_headroom
    if (block := plan_block(methods, protocol["llm"], planned)) is not None:
        document["planned_vs_measured"] = block
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


def _difference(paired: dict | None, digits: int, *, level: bool = False, lines: bool = False) -> str:
    """`+0.0123 [-0.0100, +0.0300] ≈` for one paired comparison (`level`: with the interval's
    confidence level; `lines`: the interval on a second line)."""
    if not paired:
        return ""
    interval = paired["ci"]
    bounds = f"[{interval[0]:+.{digits}f}, {interval[1]:+.{digits}f}]" if interval else ""
    if interval is None and paired.get("users", 0) >= 2:  # too few users to reject any difference
        bounds = "(−∞, +∞)"
    if bounds and level and paired.get("ci_level") is not None:
        bounds += f" ({_percent(paired['ci_level'])})"
    if lines:
        return f"{paired['difference']:+.{digits}f} {paired['marker']}" + (f"\n{bounds}" if bounds else "")
    return f"{paired['difference']:+.{digits}f}{' ' + bounds if bounds else ''} {paired['marker']}"


def _percent(level: float) -> str:
    """A confidence level as a percentage with one decimal at most: 95%, 97.5%, 98.3%."""
    return f"{100 * level:.1f}".removesuffix(".0") + "%"


def interval_levels(comparisons: dict | None) -> list[float]:
    """The distinct confidence levels of the paired intervals, ascending."""
    rows = (comparisons or {}).get("methods") or {}
    found = {cell["ci_level"] for row in rows.values() for cell in row.values() if "ci_level" in cell}
    return sorted(found)


def comparison_note(comparisons: dict | None) -> str:
    """Which reference, how it was chosen, and what the markers and intervals mean."""
    if not comparisons:
        return ""
    settings = stats.settings()
    if comparisons.get("reference") is None:
        return f"No paired comparisons: {comparisons.get('reference_chosen')}."
    compared = len(comparisons.get("methods") or {})
    levels = [_percent(level) for level in interval_levels(comparisons)] or ["95%"]
    span = levels[0] if len(levels) == 1 else f"{levels[0]}–{levels[-1]}"
    return (
        f"Reference: {comparisons['reference']} — {comparisons['reference_chosen']}. "
        f"Intervals of the metrics: {settings['interval']}, {stats.BOOTSTRAP_RESAMPLES} resamples, seed "
        f"{stats.SEED}. Markers: paired two-sided permutation test of the per-user difference, "
        f"Holm-corrected across the {compared} compared methods per metric; {stats.MARKERS[stats.BETTER]} "
        f"better / {stats.MARKERS[stats.WORSE]} worse than the reference at adjusted p < {stats.ALPHA}, "
        f"{stats.MARKERS[stats.SAME]} no detectable difference. Intervals of the differences: the shifts "
        f"the same test does not reject at the level Holm held each comparison to ({span} here), so an "
        "interval excludes 0 exactly when its marker is ▲ or ▼."
    )


def differences_markdown(comparisons: dict | None) -> str:
    """Paired differences vs the reference (headline metrics) in Markdown, with Holm p-values."""
    rows = (comparisons or {}).get("methods") or {}
    if not rows:
        return ""
    head = [f"Δ {m} [CI] (level)" for m in HEADLINE] + [f"p_holm {m}" for m in HEADLINE]
    lines = [
        f"Paired differences (method − {comparisons['reference']}):\n",
        "| method | " + " | ".join(head) + " |",
        "|---" * (len(head) + 1) + "|",
    ]
    for name, row in rows.items():
        cells = [_difference(row.get(m), 4, level=True) for m in HEADLINE]
        cells += [f"{row[m]['p_holm']:.4f}" if m in row else "" for m in HEADLINE]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _usage(row: dict, column: str, digits: int) -> str:
    """A usage cell: the fallback share and the model's share of the ranking positions as percentages
    ("–" without LLM answers), others as they are."""
    if column == "fallback_share":
        return format_share(row.get(column))
    if column in MODEL_SHARE_HEADS:
        return format_model_share(row, MODEL_SHARE_HEADS[column])
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
    router_headroom: dict[str, Any] | None = None,
    planned: Sequence[PlannedCalls] | None = None,
) -> Path:
    """Write `<out>/report.md` (with intervals, markers and paired differences when given, the
    fallback warning above the table and the model-share warning under it when a method is above
    its threshold, the method that stopped the run when one `failed`, how `candidates` were made
    and who was eligible, the quality–cost table with its Pareto frontier, and with a router in the
    run its comparison with the best single method and the per-user oracle; with an LLM backend the
    calls and tokens planned (`planned`: the probed plan) beside those measured; last, each
    method's one-time work with its wall and CPU seconds)."""
    block = quality_cost(methods, protocol["llm"])
    parts = (
        comparison_note(comparisons),
        differences_markdown(comparisons),
        quality_cost_markdown(block),
        headroom_markdown(router_headroom),
        plan_markdown(plan_block(methods, protocol["llm"], planned)),
        degraded_markdown(methods),
        one_time_markdown(methods),
    )
    extra = "".join(f"{part}\n\n" for part in parts if part)
    warning = "".join(f"> **{line}**\n\n" for line in fallback_lines(fallbacks))
    after = "".join(f"> **{line}**\n\n" for line in model_share_lines(fallbacks))
    if failed:
        warning = f"{failure_markdown(failed)}\n\n{warning}"
    candidates_line = ""
    if candidates:
        candidates_line = f"- {describe_cases(candidates)}\n- {describe_candidates(candidates)}\n"
    candidates_line += "".join(f"- ran with {line}\n" for line in ran_with(methods))
    text = (
        f"# recgraph bench — {dataset}\n\n"
        f"- backend: {describe_backend(protocol['llm'])}\n"
        f"- scenario: {protocol['scenario']}; candidates per user: {protocol['candidates']}; "
        f"users: {protocol['users'] or 'all eligible'} requested; seed: {protocol['seed']}\n"
        f"{candidates_line}"
        f"- {FALLBACK_NOTE}\n\n"
        f"{warning}{markdown_table(methods, comparisons)}\n\n{after}{extra}"
        "![headline metrics, quality vs cost](report.png)\n"
    )
    path = out / "report.md"
    path.write_text(text)
    return path
