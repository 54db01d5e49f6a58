"""Planned beside measured in every bench report with an LLM backend (report.md and metrics.json
`planned_vs_measured`).

Per LLM method: the requests its `llm_calls` hook declares per user (metrics.json `call_plan`) times
its users, and when the run's plan was probed (a hosted or local model, and every `recgraph
reproduce` run but the heuristic one: bench/run/cost_probe.py) the planned calls, input and output tokens
and dollars, prepare steps included; beside them what the run measured (ranking and prepare together:
bench/cost/measured.py) and the measured over planned ratio of the tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from bench.cost.measured import measured_usage
from graphs.registry import METHODS

if TYPE_CHECKING:
    from bench.cost.planned_calls import PlannedCalls

PLAN_NOTE = (
    "declared: the requests each method's `llm_calls` plan declares (users × per user), plus at most the "
    "requests of the prepare work a method declares (`training_calls`: AMEM4Rec's pool training windows, "
    "when the run's plan was printed; other prepare steps are not declared); planned: the plan printed "
    "before the run (bench/run/cost_probe.py: the methods on a sample of users under the loopback simulator, "
    "≈4 characters per token, prepare steps included; only when the run's plan was probed: a hosted or "
    "local model, or `recgraph reproduce`); measured: ranking and prepare together."
)
"""What the columns of the planned-beside-measured table count."""


def plan_block(
    methods: Mapping[str, Mapping[str, Any]], llm: str, planned: Sequence[PlannedCalls] | None = None
) -> dict[str, dict[str, Any]] | None:
    """Per LLM method: `declared` ranking calls, `planned` usage (None when not probed), `measured`
    usage and `tokens_measured_over_planned`, and the declared prepare work when the plan holds it
    (`declared_training`: steps, step, calls_at_most); None under the heuristic backend (no model
    asked)."""
    if llm == "heuristic":
        return None
    from bench.cost.planned_calls import dollars

    rows = {row.method: row for row in planned or ()}
    block: dict[str, dict[str, Any]] = {}
    for name, entry in methods.items():
        if name not in METHODS or METHODS[name].kind != "llm":
            continue
        plan, users = entry.get("call_plan") or {}, int(entry.get("users", 0) or 0)
        measured = measured_usage(entry)
        row = rows.get(name)
        tokens = row.tokens if row is not None else None
        block[name] = {
            "users": users,
            "declared_calls": plan["per_user"] * users if plan.get("per_user") is not None else None,
            "planned": None if tokens is None else {
                "calls": tokens.calls, "input_tokens": tokens.input_tokens,
                "output_tokens": tokens.output_tokens, "usd": dollars(llm, tokens),
            },
            "measured": {
                "calls": measured.calls, "input_tokens": measured.input_tokens,
                "output_tokens": measured.output_tokens, "usd": entry.get("est_cost_usd"),
            },
            "tokens_measured_over_planned": _ratio(tokens, measured),
        }  # fmt: skip
        trains = row.training if row is not None else None  # e.g. AMEM4Rec's windows
        if trains is not None:
            block[name]["declared_training"] = {
                "steps": trains.steps,
                "step": trains.step,
                "calls_at_most": trains.calls,
            }
    return block or None


def _ratio(planned: Any, measured: Any) -> float | None:
    if planned is None:
        return None
    total = planned.input_tokens + planned.output_tokens
    return (measured.input_tokens + measured.output_tokens) / total if total else None


def _declared(row: Mapping[str, Any]) -> str:
    """The declared ranking calls, and the declared training's bound when there is one."""
    trains = row.get("declared_training")
    extra = (
        f" + ≤{trains['calls_at_most']:,} training ({trains['steps']:,} {trains['step']})" if trains else ""
    )
    return _n(row["declared_calls"]) + extra


def _n(value: float | None, money: bool = False) -> str:
    if value is None:
        return "—"
    return f"${value:,.4f}" if money else f"{value:,.0f}"


def plan_markdown(block: Mapping[str, Mapping[str, Any]] | None) -> str:
    """The planned-beside-measured table, or "" without one."""
    if not block:
        return ""
    heads = (
        "method | users | calls declared | calls planned | calls measured | input planned | input measured "
        "| output planned | output measured | $ planned | $ measured | tokens measured / planned"
    )
    lines = ["### LLM calls and tokens: planned beside measured\n", f"| {heads} |", "|---" * 12 + "|"]
    for name, row in block.items():
        p, m, ratio = row["planned"] or {}, row["measured"], row["tokens_measured_over_planned"]
        cells = [
            name, str(row["users"]), _declared(row), _n(p.get("calls")), _n(m["calls"]),
            _n(p.get("input_tokens")), _n(m["input_tokens"]), _n(p.get("output_tokens")),
            _n(m["output_tokens"]), _n(p.get("usd"), True), _n(m["usd"], True),
            "—" if ratio is None else f"{ratio:.3f}",
        ]  # fmt: skip
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + f"\n\n{PLAN_NOTE}"
