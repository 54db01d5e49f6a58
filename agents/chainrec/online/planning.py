"""The planner interface: what a planner sees (`PlanView`), what it answers (scores over the feasible
actions -> the chosen action and a reason), and how the planner node gets one decision.

A planner that needs no model implements `Planner.decide(view)`; one that asks a model implements
`AskingPlanner.task(view)` (an agent task whose fallback is another planner's decision). Whatever a
planner proposes is checked against the mask: an unknown or infeasible action is replaced by a
backup planner's choice and counted (`unknown_action`, `infeasible_action`). The learned planner of
the offline stage implements `Planner` over features of the same `PlanView`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from agents.base import AgentTask
from agents.chainrec.online.catalog import TOOLS, Catalog, ToolCost, normalise_action
from agents.chainrec.online.mask import feasible_actions
from state.chainrec.schemas import PlannerChoice
from state.chainrec.state import MemoryEntry


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
    catalog: Catalog = TOOLS
    """The actions this planner chooses among, in catalog order (the run's library file, plus any
    registered extension's cards)."""
    costs: Mapping[str, ToolCost] = field(default_factory=dict)
    """Each action's planned cost (empty: costs are not shown)."""
    catalog_note: str = ""
    """A paragraph the LLM planner's prompt adds after the catalog (the library's; empty: none)."""

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
        return feasible_actions(self.mask, self.catalog)

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
    action = normalise_action(choice.action, view.catalog)
    if action is not None and view.mask.get(action, False):
        return choice.model_copy(update={"action": action}), []
    kind = "unknown_action" if action is None else "infeasible_action"
    repaired = backup.decide(view)
    note = f"proposed {choice.action!r} ({kind.replace('_', ' ')}); {repaired.reason}"
    return repaired.model_copy(update={"reason": note}), [kind]


@dataclass
class PlannerCall:
    """One decision as the planner node runs it."""

    task: AgentTask[PlannerChoice]
    """The agent task (a model call only when `needed`)."""
    needed: bool
    """True when a model is asked (an asking planner with more than one feasible action)."""
    repairs: list[str]
    """Repairs applied to a model-free planner's proposal (a model's are counted by its task)."""


def planner_call(planner: Planner | AskingPlanner, view: PlanView, backup: Planner) -> PlannerCall:
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
        choice, repairs = repair_choice(planner.decide(view), view, backup)  # type: ignore[union-attr]
    task = AgentTask(
        agent="planner",
        role="planner",
        messages=[],
        schema=PlannerChoice,
        validate=lambda answer: (answer, []),
        fallback=lambda: choice,
    )
    return PlannerCall(task, False, repairs)
