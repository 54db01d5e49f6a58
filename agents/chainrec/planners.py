"""Planners behind one interface: scores over the feasible actions -> the chosen action and a reason.

A planner sees a `PlanView` — S_t = (u, I_cand, M_t), the feasibility mask, the budget and the
dataset's domain flags — and answers a `PlannerChoice`. Planners that need no model implement
`decide(view)`; a planner that asks a model implements `task(view)` (an agent task whose fallback
is another planner's decision). `PLANNERS` maps `Context.chainrec_planner` to a factory; the learned
planner of the offline stage registers here through the same interface.

Whatever a planner proposes is checked against the mask: an unknown action or an infeasible one is
replaced by the rule planner's choice and counted (`unknown_action`, `infeasible_action`).

- `rule` (RulePlanner): a state-dependent plan, see its docstring.
- `fixed` (FixedPlanner): one configured chain, infeasible tools skipped, then CandidateRank.
- `llm` (LlmPlanner): zero-shot: the tool catalog, what the memory holds, the mask; the action is an
  enum of exactly the feasible actions; falls back to `rule`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from agents.base import AgentTask, InvalidAnswer
from agents.chainrec.catalog import (
    AUTHOR,
    BY_NAME,
    CANDIDATE_RANK,
    GEO,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    NEGATIVE,
    POSITIVE,
    SHORT_TERM,
    TOOLS,
    normalise_action,
    parse_chain,
)
from agents.chainrec.mask import feasible_actions
from prompts import chainrec as prompts
from state.chainrec_schemas import PlannerChoice, planner_json_schema
from state.chainrec_state import MemoryEntry
from state.context import Context
from world.errors import RecgraphError


@dataclass(frozen=True)
class PlanView:
    """What a planner sees at one decision."""

    user_id: str
    """u."""
    candidates: tuple[str, ...]
    """I_cand."""
    scenario: str
    """The request's scenario tag."""
    memory: tuple[MemoryEntry, ...]
    """M_t."""
    mask: Mapping[str, bool]
    """Action -> feasible now."""
    notes: Mapping[str, str]
    """Why each infeasible action is masked."""
    max_steps: int
    """The step budget T_max."""
    domain: Mapping[str, bool]
    """What the dataset carries (ratings, reviews, categories, timestamps, authors, locations)."""

    @property
    def step(self) -> int:
        """Tools run so far."""
        return len(self.memory)

    @property
    def used(self) -> list[str]:
        """The tools run so far, in order."""
        return [entry["tool"] for entry in self.memory]

    @property
    def feasible(self) -> list[str]:
        """The feasible actions in catalog order (CandidateRank last)."""
        return feasible_actions(self.mask)

    def stat(self, key: str) -> float | None:
        """The latest value a tool reported for `key` in its fetch statistics (None: not yet)."""
        for entry in reversed(self.memory):
            if key in entry["stats"]:
                return float(entry["stats"][key])
        return None


@runtime_checkable
class Planner(Protocol):
    """A planner that decides without a model."""

    name: str

    def decide(self, view: PlanView) -> PlannerChoice:
        """The next action (scores over the feasible actions, the chosen one and a reason)."""
        ...


@runtime_checkable
class AskingPlanner(Protocol):
    """A planner that asks a model (role "planner"); its task's fallback is a `Planner`'s decision."""

    name: str

    def task(self, view: PlanView) -> AgentTask[PlannerChoice]:
        """The agent task for this decision."""
        ...


def choose(scores: Mapping[str, float], view: PlanView, reason: str) -> PlannerChoice:
    """The best-scored feasible action (ties: catalog order) with `scores` kept over the feasible ones."""
    feasible = view.feasible
    kept = {action: round(float(scores.get(action, 0.0)), 4) for action in feasible}
    best = max(feasible, key=lambda action: (kept[action], -feasible.index(action)))
    return PlannerChoice(action=best, reason=reason.format(action=best), scores=kept)


def repair_choice(choice: PlannerChoice, view: PlanView, backup: Planner) -> tuple[PlannerChoice, list[str]]:
    """`choice` if its action is feasible now; else the backup's decision and the repair kind."""
    action = normalise_action(choice.action)
    if action is not None and view.mask.get(action, False):
        return choice.model_copy(update={"action": action}), []
    kind = "unknown_action" if action is None else "infeasible_action"
    repaired = backup.decide(view)
    note = f"proposed {choice.action!r} ({kind.replace('_', ' ')}); {repaired.reason}"
    return repaired.model_copy(update={"reason": note}), [kind]


class RulePlanner:
    """A documented state-dependent heuristic.

    1. Regime: the scenario tag (classic, cold_user, cold_item, evolving_short, evolving_long), turned
       into cold_user when a tool reported at most 5 visible history items.
    2. The regime's plan: classic LongTerm → ShortTerm → ItemProfile → ItemSemantic → Positive;
       cold_user ItemProfile → ItemSemantic (item-side first: the history says little);
       cold_item ItemSemantic → LongTerm → ShortTerm (popularity misleads for cold targets: no
       ItemProfile); evolving_short ShortTerm → ItemSemantic → ItemProfile; evolving_long ShortTerm →
       LongTerm → ItemSemantic → ItemProfile.
    3. Memory adjusts it: GeoContext goes first and AuthorPreference second whenever feasible; a short
       window (ShortTerm saw at most 2 items) adds LongTerm; 3 or more low ratings add
       NegativePreference after the user tools; no high rating drops PositivePreference.
    4. Scores: the plan's i-th tool 1 − 0.05·i, CandidateRank 0.5 (so it wins once the plan is done),
       any other tool 0.1; the best feasible action is chosen.
    """

    name = "rule"
    PLANS: ClassVar[dict[str, tuple[str, ...]]] = {
        "classic": (LONG_TERM, SHORT_TERM, ITEM_PROFILE, ITEM_SEMANTIC, POSITIVE),
        "cold_user": (ITEM_PROFILE, ITEM_SEMANTIC),
        "cold_item": (ITEM_SEMANTIC, LONG_TERM, SHORT_TERM),
        "evolving_short": (SHORT_TERM, ITEM_SEMANTIC, ITEM_PROFILE),
        "evolving_long": (SHORT_TERM, LONG_TERM, ITEM_SEMANTIC, ITEM_PROFILE),
    }
    COLD_HISTORY = 5
    THIN_WINDOW = 2
    MANY_DISLIKES = 3
    STOP = 0.5

    def regime(self, view: PlanView) -> str:
        """The scenario tag, or cold_user when the memory shows a very short history."""
        regime = view.scenario if view.scenario in self.PLANS else "classic"
        history = view.stat("history_items")
        return "cold_user" if history is not None and history <= self.COLD_HISTORY else regime

    def plan(self, view: PlanView) -> list[str]:
        """The tools this state calls for, in order (some may already have run)."""
        regime = self.regime(view)
        plan = list(self.PLANS[regime])
        recent = view.stat("recent_items")
        if recent is not None and recent <= self.THIN_WINDOW and LONG_TERM not in plan:
            plan.insert(plan.index(SHORT_TERM) + 1 if SHORT_TERM in plan else 0, LONG_TERM)
        if (view.stat("low_rated_items") or 0) >= self.MANY_DISLIKES and regime != "cold_user":
            users = [i for i, tool in enumerate(plan) if BY_NAME[tool].side == "user"]
            plan.insert(users[-1] + 1 if users else len(plan), NEGATIVE)
        if view.stat("high_rated_items") == 0 and POSITIVE in plan:
            plan.remove(POSITIVE)
        return [GEO, *plan[:1], AUTHOR, *plan[1:]]

    def decide(self, view: PlanView) -> PlannerChoice:
        """Score the feasible actions by the plan and pick the best."""
        plan = [tool for tool in self.plan(view) if view.mask.get(tool, False)]
        scores = {spec.name: 0.1 for spec in TOOLS}
        for position, tool in enumerate(plan):
            scores[tool] = 1.0 - 0.05 * position
        scores[CANDIDATE_RANK] = self.STOP
        regime = self.regime(view)
        reason = f"rule[{regime}]: " + (
            "next planned tool {action}" if plan else "plan done, rank with {action}"
        )
        return choose(scores, view, reason)


class FixedPlanner:
    """One configured chain (`Context.chainrec_fixed_chain`; default: every tool in catalog order):
    its next feasible tool, then CandidateRank."""

    name = "fixed"

    def __init__(self, chain: Sequence[str]) -> None:
        """`chain`: tool names in order."""
        self.chain = list(chain)

    def decide(self, view: PlanView) -> PlannerChoice:
        """The chain's first feasible tool not yet run; CandidateRank when none is left."""
        nxt = next((tool for tool in self.chain if view.mask.get(tool, False)), None)
        scores = {action: 0.0 for action in view.feasible}
        if nxt is not None:
            scores[nxt] = 1.0
        else:
            scores[CANDIDATE_RANK] = 1.0
        reason = "fixed chain: " + ("next tool {action}" if nxt else "chain done, {action}")
        return choose(scores, view, reason)


class LlmPlanner:
    """Zero-shot planner (role "planner"): catalog, memory and mask in the prompt; the answer's action
    is an enum of the feasible actions; infeasible or unknown answers are repaired to the rule
    planner's choice (counted); a failed model falls back to the rule planner."""

    name = "llm"

    def __init__(self, backup: Planner | None = None) -> None:
        """`backup`: the planner that repairs and replaces failed answers (default: rule)."""
        self.backup = backup or RulePlanner()

    def task(self, view: PlanView) -> AgentTask[PlannerChoice]:
        """The planner call for this decision."""
        catalog = "\n".join(
            f"- {s.name}: {s.description} Reads: {s.inputs}. Writes: {s.outputs}." for s in TOOLS
        )
        masked = {name: why for name, why in view.notes.items()}
        messages = prompts.planner_messages(
            view.user_id,
            len(view.candidates),
            view.scenario,
            view.step,
            view.max_steps,
            catalog,
            prompts.memory_digest(view.memory),
            view.feasible,
            masked,
        )

        def validate(answer: PlannerChoice) -> tuple[PlannerChoice, list[str]]:
            if not answer.action.strip():
                raise InvalidAnswer("'action' is empty; name one feasible action", "empty_action")
            choice, repairs = repair_choice(answer, view, self.backup)
            if not repairs:
                choice = choice.model_copy(update={"scores": {choice.action: 1.0}})
            return choice, repairs

        return AgentTask(
            agent="planner",
            role="planner",
            messages=messages,
            schema=PlannerChoice,
            validate=validate,
            fallback=lambda: self.backup.decide(view),
            json_schema=planner_json_schema(view.feasible),
        )


PLANNERS: dict[str, Callable[[Context], Planner | AskingPlanner]] = {
    "rule": lambda ctx: RulePlanner(),
    "fixed": lambda ctx: FixedPlanner(parse_chain(ctx.chainrec_fixed_chain)),
    "llm": lambda ctx: LlmPlanner(),
}
"""`Context.chainrec_planner` -> factory. A new planner (e.g. "learned") is one more entry."""


def planner_for(ctx: Context) -> Planner | AskingPlanner:
    """The planner `ctx` names; a clear error for an unknown name or a bad fixed chain."""
    factory = PLANNERS.get(ctx.chainrec_planner)
    if factory is None:
        raise RecgraphError(
            f"unknown chainrec_planner {ctx.chainrec_planner!r}; choose one of {', '.join(PLANNERS)}"
        )
    try:
        return factory(ctx)
    except ValueError as error:
        raise RecgraphError(str(error)) from None


@dataclass
class PlannerCall:
    """One decision as the planner node runs it."""

    task: AgentTask[PlannerChoice]
    """The agent task (a model call only when `needed`)."""
    needed: bool
    """True when a model is asked (an asking planner with more than one feasible action)."""
    repairs: list[str]
    """Repairs applied to a model-free planner's proposal (a model's are counted by its task)."""


def planner_call(planner: Planner | AskingPlanner, view: PlanView) -> PlannerCall:
    """How the planner node gets this decision: a model call, or the planner's own decision (repaired
    against the mask); a single feasible action is taken without asking anybody."""
    if isinstance(planner, AskingPlanner) and len(view.feasible) > 1:
        return PlannerCall(planner.task(view), True, [])
    if len(view.feasible) == 1:
        only = view.feasible[0]
        choice, repairs = (
            PlannerChoice(action=only, reason=f"only feasible action: {only}", scores={only: 1.0}),
            [],
        )
    else:
        choice, repairs = repair_choice(planner.decide(view), view, RulePlanner())  # type: ignore[union-attr]
    task = AgentTask(
        agent="planner",
        role="planner",
        messages=[],
        schema=PlannerChoice,
        validate=lambda answer: (answer, []),
        fallback=lambda: choice,
    )
    return PlannerCall(task, False, repairs)
