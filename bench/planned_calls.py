"""The LLM requests a bench run plans to send, printed before a paid backend starts.

Per method: the users still to run (a resumed run counts only those) times the method's declared
requests per user (each method's `llm_calls` hook, declared in its graphs/<method>/spec.py), and the upper
bound with every answer retried `Context.llm_retries` times.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from graphs.hooks import CallPlan
from graphs.registry import METHODS, hook, method_context
from state.context import Context


@dataclass(frozen=True)
class PlannedCalls:
    """One method's planned requests."""

    method: str
    """The method."""
    users: int
    """Users still to run."""
    plan: CallPlan | None
    """Its declared requests per user (None: an LLM method that declares none)."""

    @property
    def total(self) -> int:
        """Requests without retries (0 when undeclared)."""
        return self.users * self.plan.per_user if self.plan else 0


def plans_paid_calls(llm: str) -> bool:
    """Whether the run's backend bills per request (an `openai:` endpoint), so the plan is printed."""
    return llm.startswith("openai:")


def planned_calls(
    methods: Sequence[str], pending: Mapping[str, int], context: Context, candidates: int
) -> list[PlannedCalls]:
    """Every LLM method's planned requests (classic methods plan none and are left out)."""
    rows = []
    for method in methods:
        if METHODS[method].kind != "llm":
            continue
        rows.append(PlannedCalls(method, pending[method], declared_plan(method, context, candidates)))
    return rows


def declared_plan(method: str, context: Context, candidates: int) -> CallPlan | None:
    """What an LLM method's `llm_calls` hook declares for `context` (None: it declares nothing)."""
    declared = hook(method, "llm_calls")
    return declared(method_context(method, context), candidates) if declared else None


def call_plan_entry(method: str, context: Context, candidates: int) -> dict[str, Any] | None:
    """A method's requests per user as metrics.json records them (`call_plan`: `per_user`, `at_most`,
    `note`), from its `llm_calls` hook with the context it ranked with: 0 for a classic method (it
    asks no LLM), None for an LLM method that declares no plan. The quality–cost panel plots these
    when the backend is heuristic (bench/quality_cost.py)."""
    if METHODS[method].kind != "llm":
        return {"per_user": 0, "at_most": False, "note": "classic method: no LLM"}
    plan = declared_plan(method, context, candidates)
    return asdict(plan) if plan else None


def describe_plan(rows: Sequence[PlannedCalls], retries: int) -> str:
    """One line per method and a total: "arag: 50 users × 4 = 200 requests", retries as the bound."""
    lines = []
    for row in rows:
        if row.plan is None:
            lines.append(f"  {row.method}: {row.users} users × ? (the method declares no llm_calls)")
            continue
        bound = "at most " if row.plan.at_most else ""
        note = f" ({row.plan.note})" if row.plan.note else ""
        lines.append(f"  {row.method}: {row.users} users × {bound}{row.plan.per_user} = {row.total}{note}")
    total = sum(row.total for row in rows)
    head = (
        f"planned LLM requests: {total:,} before retries, up to {total * (retries + 1):,} if every "
        f"answer needs its {retries} retries"
    )
    return "\n".join([head, *lines])
