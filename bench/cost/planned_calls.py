"""The LLM requests a bench run plans to send, their tokens and dollars, printed before a paid
backend starts (and by `recgraph reproduce --dry-run`).

Per method: the users still to run (a resumed run counts only those) times the method's declared
requests per user (each method's `llm_calls` hook, declared in its graphs/<method>/spec.py), and the
upper bound with every answer retried `Context.llm_retries` times. With a probe (bench/run/cost_probe.py:
the method run on a few of the users against the loopback simulator; a prepare step that grows
unlike the users, as AMEM4Rec's pool training, fitted on two sample sizes) also the tokens: input
from the prompts the method built, output as the simulator answered or, for a hosted model, each
ranking answer at its output budget (agents/output_budget.py: the most it can be billed), and the
dollars from bench/cost/prices.json ("price unknown" for a model it does not list).

A method whose prepare step declares its work (`training_calls`, bench/cost/planned_training.py: AMEM4Rec's
pool training windows, counted from the run's split and `--set` knobs) gets a training line of its own:
the units of work, the requests they ask at most (counted in the total), and, probed, their tokens
and dollars (the probe's line over those units).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from agents.output_budget import output_budget
from bench.cost.measured import Usage
from bench.cost.prices import price_for, price_table
from graphs.hooks import CallPlan, TrainingPlan
from graphs.registry import METHODS, hook, method_context
from state.context import Context

if TYPE_CHECKING:
    from bench.cost.probed import Probed


@dataclass(frozen=True)
class PlannedCalls:
    """One method's planned requests (and tokens, when probed)."""

    method: str
    """The method."""
    users: int
    """Users still to run."""
    plan: CallPlan | None
    """Its declared requests per user (None: an LLM method that declares none)."""
    tokens: Usage | None = None
    """Planned calls and tokens over those users, the prepare step's included (None: not probed)."""
    training: TrainingPlan | None = None
    """Its prepare step's planned work and requests (None: the method declares no `training_calls`)."""
    training_tokens: Usage | None = None
    """The prepare step's share of `tokens` (None: not probed, or not fitted per unit of work)."""

    @property
    def total(self) -> int:
        """Requests without retries, the declared training's included (ranking 0 when undeclared)."""
        ranking = self.users * self.plan.per_user if self.plan else 0
        return ranking + (self.training.calls if self.training else 0)


def plans_tokens(llm: str) -> bool:
    """Whether `recgraph bench` probes and prints its plan before the first call: a backend that bills
    per request (an `openai:` endpoint) or spends hours (a local model). Under `sim` the run is the
    simulator itself, so a probe would only repeat it (the report shows the declared calls beside the
    measured ones; `recgraph reproduce --llm sim` probes)."""
    return llm.startswith("openai:") or llm == "local"


def planned_calls(
    methods: Sequence[str],
    pending: Mapping[str, int],
    context: Context,
    candidates: int,
    probed: Mapping[str, Probed] | None = None,
    training: Mapping[str, TrainingPlan] | None = None,
) -> list[PlannedCalls]:
    """Every LLM method's planned requests (classic methods plan none and are left out), with its
    tokens when `probed` (bench/run/cost_probe.py) measured them, and its prepare step's work when
    `training` (bench/cost/planned_training.py) or the probe declares it."""
    rows = []
    for method in methods:
        if METHODS[method].kind != "llm":
            continue
        plan = declared_plan(method, context, candidates)
        found = (probed or {}).get(method)
        trains = (training or {}).get(method) or (found.training if found else None)
        steps = trains.steps if trains else 0
        tokens = planned_tokens(method, found, context, candidates, pending[method], steps) if found else None
        share = found.prepare_for(steps) if found and trains else None
        rows.append(PlannedCalls(method, pending[method], plan, tokens, trains, share))
    return rows


def planned_tokens(
    method: str, probed: Probed, context: Context, candidates: int, users: int, steps: int = 0
) -> Usage:
    """Calls and tokens over `users` (and `steps` units of prepare work): as probed (the prepare
    step's line at `users`, or at `steps`); for a hosted model the ranking answers at their output
    budgets instead of the simulator's lengths."""
    usage, output = probed.per_user, probed.per_user.output_tokens
    if context.llm.startswith("openai:"):
        ctx = method_context(method, context)
        budgets = sum(
            calls * output_budget(agent, candidates, ctx) for agent, calls in probed.rank_calls.items()
        )
        output = output - probed.rank_output + budgets
    usage = Usage(usage.calls, usage.input_tokens, output)
    return replace(probed, per_user=usage).for_users(users, steps)


def declared_plan(method: str, context: Context, candidates: int) -> CallPlan | None:
    """What an LLM method's `llm_calls` hook declares for `context` (None: it declares nothing)."""
    declared = hook(method, "llm_calls")
    return declared(method_context(method, context), candidates) if declared else None


def call_plan_entry(method: str, context: Context, candidates: int) -> dict[str, Any] | None:
    """A method's requests per user as metrics.json records them (`call_plan`: `per_user`, `at_most`,
    `note`), from its `llm_calls` hook with the context it ranked with: 0 for a classic method (it
    asks no LLM), None for an LLM method that declares no plan. The quality–cost panel plots these
    when the backend is heuristic (bench/report/quality_cost.py)."""
    if METHODS[method].kind != "llm":
        return {"per_user": 0, "at_most": False, "note": "classic method: no LLM"}
    plan = declared_plan(method, context, candidates)
    return asdict(plan) if plan else None


def dollars(llm: str, tokens: Usage | None) -> float | None:
    """The tokens' price on `llm` (None: no tokens, or a model the price table lacks)."""
    price = price_for(llm)
    return price.dollars(tokens.input_tokens, tokens.output_tokens) if price and tokens else None


def _tokens_text(row: PlannedCalls, llm: str) -> str:
    if row.tokens is None:
        return ""
    cost = dollars(llm, row.tokens)
    money = (
        f", ${cost:,.2f}" if cost is not None else (", price unknown" if llm.startswith("openai:") else "")
    )
    training = " with the training below" if row.training_tokens is not None else ""
    tokens = f"{row.tokens.input_tokens:,.0f} input + {row.tokens.output_tokens:,.0f} output tokens"
    return f"; {tokens}{training}{money}"


def _training_text(plan: TrainingPlan, tokens: Usage | None, llm: str) -> str:
    """The prepare step's line: its units of work, requests at most, and probed tokens."""
    light = min(plan.light_steps, plan.steps)
    first = ""
    if light and plan.per_step > 1:  # the first round of AMEM4Rec's windows meets an empty pool
        first = (
            f"; the first {light:,} {plan.step} meet"
            if light > 1
            else f"; the first of the {plan.step} meets"
        )
        first += " an empty pool: 1 request each" if light > 1 else " an empty pool: 1 request"
    text = (
        f"    training: {plan.steps:,} {plan.step} ({plan.note}) × at most {plan.per_step} = at most "
        f"{plan.calls:,} requests{first}"
    )
    if tokens is not None:
        cost = dollars(llm, tokens)
        money = f", ${cost:,.2f}" if cost is not None else ""
        text += f"; {tokens.input_tokens:,.0f} input + {tokens.output_tokens:,.0f} output tokens{money}"
    return text


def describe_plan(rows: Sequence[PlannedCalls], retries: int, llm: str = "") -> str:
    """One line per method and a total: "arag: 50 users × 4 = 200 requests", retries as the bound,
    with probed tokens the tokens and dollars (or "price unknown"), and under a method whose prepare
    step declares its work a "training:" line (its units, requests and their tokens)."""
    lines = []
    for row in rows:
        if row.plan is None:
            lines.append(f"  {row.method}: {row.users} users × ? (the method declares no llm_calls)")
            continue
        bound = "at most " if row.plan.at_most else ""
        note = f" ({row.plan.note})" if row.plan.note else ""
        calls = f"{row.users} users × {bound}{row.plan.per_user} = {row.users * row.plan.per_user}"
        lines.append(f"  {row.method}: {calls}{note}{_tokens_text(row, llm)}")
        if row.training is not None:
            lines.append(_training_text(row.training, row.training_tokens, llm))
    total = sum(row.total for row in rows)
    head = (
        f"planned LLM requests: {total:,} before retries, up to {total * (retries + 1):,} if every "
        f"answer needs its {retries} retries"
    )
    return "\n".join([head, *lines, *_total_lines(rows, llm)])


def _total_lines(rows: Sequence[PlannedCalls], llm: str) -> list[str]:
    """The planned tokens and dollars in total, and which prices and token counts they use."""
    probed = [row.tokens for row in rows if row.tokens is not None]
    if not probed:
        return []
    tokens_in, tokens_out = sum(t.input_tokens for t in probed), sum(t.output_tokens for t in probed)
    cost = dollars(llm, Usage(0, tokens_in, tokens_out))
    price = price_for(llm)
    if price is not None:
        read_on, _ = price_table()
        money = (
            f"${cost:,.2f} at {price.model}'s ${price.input}/${price.output} per 1M input/output "
            f"tokens (bench/cost/prices.json, read {read_on})"
        )
    elif llm.startswith("openai:"):
        money = f"price unknown: {llm.removeprefix('openai:')} is not in bench/cost/prices.json"
    else:
        money = f"no price: {llm or 'this backend'} is not billed"
    budget = (
        " (hosted model: ranking answers counted at their output budgets)"
        if llm.startswith("openai:")
        else ""
    )
    return [
        f"planned tokens: {tokens_in:,.0f} input + {tokens_out:,.0f} output{budget}; {money}",
        "  (tokens: each method's prompts rendered for a sample of users under the loopback simulator, "
        "≈4 characters per token)",
    ]
