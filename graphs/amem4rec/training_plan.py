"""AMEM4Rec's `training_calls` hook: the requests its pool training plans before ranking, counted
from the run's split and knobs (the cost plan prints them beside the ranking's one call per user).

Windows: those `graphs.amem4rec.training.train_pool` would train, `agents.amem4rec.windows.plan_windows`
over `graphs.amem4rec.hooks.training_users` (the users under test, plus as many others in a cold
scenario's world), `amem4rec_window` items each, the latest `amem4rec_windows_per_user` per user (0:
all, `PAPER_TRAINING`). Requests per window, at most: the extractor, the semantic validator when it is
on, and the evolver when evolution is on (`w/o evolution` stores only: the extractor alone). The
first round (`amem4rec_round_windows` windows, one under `PAPER_TRAINING`) meets an empty pool: the
extractor alone.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.amem4rec.windows import plan_windows
from graphs.amem4rec.hooks import training_users
from graphs.hooks import TrainingPlan
from state.amem4rec.context import Amem4RecContext
from world.environment import get_environment


def requests_per_window(context: Amem4RecContext) -> int:
    """At most: extraction, then linking (semantic validator) and evolution when they are on."""
    if not context.amem4rec_evolution:
        return 1
    return 1 + int(context.amem4rec_semantic) + 1


def amem4rec_training_calls(
    context: Amem4RecContext, users: Sequence[str], scenario: str, seed: int
) -> TrainingPlan:
    """The pool training's windows and requests for `users` in the run's world (`context.dataset`)."""
    env = get_environment(context.dataset)
    w, per_user = context.amem4rec_window, context.amem4rec_windows_per_user
    trained = training_users(env, users, scenario, seed, w)
    windows = plan_windows(env, trained, w, per_user)
    cap = f"the latest {per_user} per user" if per_user else "every window of each user"
    rounds = context.amem4rec_round_windows
    order = "one after another" if rounds == 1 else f"in rounds of {rounds}"
    note = f"{cap} of {len(trained)} users, w={w}, {order}"
    return TrainingPlan(
        len(windows), "windows", requests_per_window(context), min(rounds, len(windows)), note
    )
