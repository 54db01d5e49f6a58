"""Planned beside measured: the plan printed before the run and the calls and tokens the run's
metrics.json recorded, per run (paper dataset/scenario) and method, with their ratio."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bench.cost.measured import measured_usage
from bench.cost.planned_calls import dollars


def cost_rows(
    rows: Sequence[tuple[str, Any]], metrics: Mapping[str, Mapping[str, Any]], llm: str
) -> list[dict]:
    """Per (run folder, method) with a probed plan (`rows`: run folder -> plan row, `metrics`: run
    folder -> its metrics.json): planned and measured calls and tokens, and the
    measured over planned ratio of the tokens (input plus output)."""
    found = []
    for folder, row in rows:
        entry = ((metrics.get(folder) or {}).get("methods") or {}).get(row.method)
        if row.tokens is None or entry is None:
            continue
        measured = measured_usage(entry)
        planned_total = row.tokens.input_tokens + row.tokens.output_tokens
        measured_total = measured.input_tokens + measured.output_tokens
        found.append({
            "run": folder, "method": row.method,
            "planned": {"calls": row.tokens.calls, "input_tokens": row.tokens.input_tokens,
                        "output_tokens": row.tokens.output_tokens, "usd": dollars(llm, row.tokens)},
            "measured": {"calls": measured.calls, "input_tokens": measured.input_tokens,
                         "output_tokens": measured.output_tokens, "usd": entry.get("est_cost_usd")},
            "tokens_measured_over_planned": measured_total / planned_total if planned_total else None,
        })  # fmt: skip
    return found


def cost_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The planned-beside-measured table, or "" when nothing was planned (heuristic backend)."""
    if not rows:
        return ""
    lines = [
        "\n### Cost: planned before the run beside measured\n",
        "| run | method | calls planned | calls measured | input planned | input measured "
        "| output planned | output measured | tokens measured / planned |",
        "|---" * 9 + "|",
    ]
    for row in rows:
        p, m, ratio = row["planned"], row["measured"], row["tokens_measured_over_planned"]
        lines.append(
            f"| {row['run']} | {row['method']} | {p['calls']:,.0f} | {m['calls']:,.0f} "
            f"| {p['input_tokens']:,.0f} "
            f"| {m['input_tokens']:,.0f} | {p['output_tokens']:,.0f} | {m['output_tokens']:,.0f} "
            f"| {'' if ratio is None else f'{ratio:.3f}'} |"
        )
    return "\n".join(lines) + "\n"
