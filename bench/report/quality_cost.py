"""The quality–cost picture of a bench run: ndcg@5 against LLM calls (and tokens) per user, with the
Pareto frontier (metrics.json `quality_cost`, report.md's table, the console line, report.png's panel).

Which cost is used, decided once per run so every method sits on the same axis:

- a backend that asks a model (`sim`, `local`, `openai:...`): **measured**, the requests the model
  answered per user (`llm_calls` of results.jsonl's usage) and their prompt + completion tokens per
  user, plus MemRec's Stage W warm-up write (one per user, logged by its prepare hook as `stage_w`);
  one-time training (AMEM4Rec pools, ChainRec's planner) is not a per-user cost and is left out;
- the heuristic backend (no LLM is ever asked, so every measured count is 0): **planned**, the
  requests an LLM run would send per user before retries, as each method's `llm_calls` hook declares
  them (metrics.json `call_plan`, bench/cost/planned_calls.py). Loops the model ends are counted at their
  budget (`at_most`). No tokens: a plan has none. These are never measured LLM results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

QUALITY = "ndcg@5"
"""The quality axis."""
MEASURED = "measured"
"""Cost source of a backend that asks a model."""
PLANNED = "planned"
"""Cost source of the heuristic backend: the calls an LLM run would make."""
PER_USER_PREPARE = ("stage_w",)
"""Prepare-hook usage blocks of a method's metrics.json entry that are per-user calls (MemRec's
Stage W: one warm-up write per user, which its call plan counts too)."""
CALLS_AXIS = {
    MEASURED: "LLM requests answered per user (measured)",
    PLANNED: "planned calls per user (heuristic backend: calls an LLM run would make, not measured)",
}
"""What the calls axis means, per cost source."""
TOKENS_AXIS = "prompt + completion tokens per user (measured)"
"""What the tokens axis means (measured runs only)."""


def cost_source(llm: str) -> str:
    """`PLANNED` for the heuristic backend (it makes no calls to measure), else `MEASURED`."""
    return PLANNED if llm == "heuristic" else MEASURED


def pareto_front(points: Mapping[str, tuple[float, float]]) -> set[str]:
    """The names whose (cost, quality) point no other dominates: no other has quality ≥ and cost ≤
    with one of them strict. Equal points are all on the frontier."""
    return {
        name
        for name, (cost, quality) in points.items()
        if not any(
            c <= cost and q >= quality and (c < cost or q > quality)
            for other, (c, q) in points.items()
            if other != name
        )
    }


def _measured(row: Mapping[str, Any], field: str) -> float:
    """A usage count over the run's users: ranking plus the per-user prepare blocks."""
    extra = sum(float((row.get(block) or {}).get(field, 0)) for block in PER_USER_PREPARE)
    return float(row.get(field, 0)) + extra


def method_costs(row: Mapping[str, Any], source: str) -> dict[str, Any]:
    """One method's calls per user (None when unknown: no declared plan), whether that is a budget
    (`calls_at_most`) and its tokens per user (None when planned)."""
    users = max(1, int(row.get("users", 0)))
    if source == MEASURED:
        tokens = (_measured(row, "input_tokens") + _measured(row, "output_tokens")) / users
        return {"llm_calls_per_user": _measured(row, "llm_calls") / users, "calls_at_most": False,
                "tokens_per_user": tokens}  # fmt: skip
    plan = row.get("call_plan")
    calls = float(plan["per_user"]) if plan else None
    at_most = bool(plan and plan["at_most"])
    return {"llm_calls_per_user": calls, "calls_at_most": at_most, "tokens_per_user": None}


def quality_cost(methods: Mapping[str, Mapping[str, Any]], llm: str) -> dict[str, Any]:
    """metrics.json's `quality_cost` block: the cost source and the meaning of each axis, and per
    method ndcg@5, calls and tokens per user and whether it is on the Pareto frontier (`pareto`
    against calls, `pareto_tokens` against tokens; None where its cost is unknown or not measured)."""
    source = cost_source(llm)
    rows = {name: {QUALITY: row.get(QUALITY), **method_costs(row, source)} for name, row in methods.items()}
    for axis, flag in (("llm_calls_per_user", "pareto"), ("tokens_per_user", "pareto_tokens")):
        points = {n: (r[axis], r[QUALITY]) for n, r in rows.items() if None not in (r[axis], r[QUALITY])}
        front = pareto_front(points)
        for name, row in rows.items():
            row[flag] = (name in front) if name in points else None
    tokens_estimated = source == MEASURED and any(row.get("tokens_estimated") for row in methods.values())
    return {
        "quality": QUALITY,
        "cost_source": source,
        "calls_axis": CALLS_AXIS[source],
        "tokens_axis": TOKENS_AXIS if source == MEASURED else None,
        "tokens_estimated": tokens_estimated,
        "pareto": f"not dominated: no other method has {QUALITY} ≥ at cost ≤, one of them strictly",
        "methods": rows,
    }


def frontier(block: Mapping[str, Any], flag: str = "pareto") -> list[str]:
    """The methods on the frontier (`flag`: "pareto" for calls, "pareto_tokens"), cheapest first."""
    axis = "llm_calls_per_user" if flag == "pareto" else "tokens_per_user"
    rows = block["methods"]
    return sorted((n for n, r in rows.items() if r[flag]), key=lambda n: (rows[n][axis], -rows[n][QUALITY]))


def _number(value: float | None, at_most: bool = False) -> str:
    if value is None:
        return "?"
    text = f"{value:.0f}" if float(value).is_integer() else f"{value:.2f}"
    return f"≤{text}" if at_most else text


def quality_cost_markdown(block: Mapping[str, Any]) -> str:
    """report.md's quality–cost table: ndcg@5, calls (and tokens) per user, ✓ on the frontier."""
    tokens = block["tokens_axis"] is not None
    head = ["method", QUALITY, "calls/user", "Pareto (calls)"]
    head += ["tokens/user", "Pareto (tokens)"] if tokens else []
    lines = [
        f"Quality vs cost ({block['cost_source']}): {QUALITY} against {block['calls_axis']}"
        + (f", and {block['tokens_axis']}" if tokens else "")
        + f". Pareto frontier ✓: {block['pareto']}; ≤: the method's budget, the graph may stop earlier;"
        " ?: no declared plan.\n",
        "| " + " | ".join(head) + " |",
        "|---" * len(head) + "|",
    ]
    for name, row in block["methods"].items():
        quality = "?" if row[QUALITY] is None else f"{row[QUALITY]:.4f}"
        calls = _number(row["llm_calls_per_user"], row["calls_at_most"])
        cells = [name, quality, calls, _mark(row["pareto"])]
        if tokens:
            cells += [_number(row["tokens_per_user"]), _mark(row["pareto_tokens"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _mark(flag: bool | None) -> str:
    return {True: "✓", False: "", None: "?"}[flag]


def frontier_line(block: Mapping[str, Any]) -> str:
    """The console's one line: the frontier against calls (and tokens) and what the cost is."""
    line = f"Pareto frontier, {QUALITY} vs {block['calls_axis']}: {', '.join(frontier(block)) or 'none'}"
    if block["tokens_axis"] is not None:
        line += f"; vs tokens per user: {', '.join(frontier(block, 'pareto_tokens')) or 'none'}"
    return line
