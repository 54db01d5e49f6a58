"""What the cost probe measured of one method (`Probed`): the numbers the planned calls price
(bench/cost/planned_calls.py); the probe that measures them runs the bench (bench/run/cost_probe.py)."""

from __future__ import annotations

from dataclasses import dataclass

from bench.cost.measured import ZERO, Usage
from graphs.hooks import TrainingPlan


@dataclass(frozen=True)
class Probed:
    """One method's measured usage, and where it comes from: `fixed` + users × `per_user`."""

    per_user: Usage
    """Calls and tokens per user: ranking, plus the prepare step's slope (ranking only when the
    prepare step is fitted per unit of work: `per_step`)."""
    rank_calls: dict[str, float]
    """Ranking requests per user, per agent (to price their outputs at their budgets)."""
    rank_output: float
    """Output tokens per user of the ranking alone (the rest is the prepare hook's)."""
    fixed: Usage = ZERO
    """The prepare step's cost that does not follow the users (the line's intercept; may be
    negative, as AMEM4Rec's first round asks less than later ones)."""
    users: tuple[int, ...] = ()
    """The probes' user counts (one, or two when the prepare step was fitted)."""
    per_step: Usage = ZERO
    """The prepare step's calls and tokens per planned unit of work (`graphs.hooks.TrainingPlan`:
    AMEM4Rec's windows), for a method declaring `training_calls`; ZERO otherwise."""
    steps: tuple[int, ...] = ()
    """The probes' planned units of work (empty: the prepare step was fitted per user)."""
    training: TrainingPlan | None = None
    """The run's prepare work, as the method declares it for all the run's users (None: undeclared)."""

    def for_users(self, users: int, steps: int | None = None) -> Usage:
        """The plan for `users` and `steps` units of prepare work (default: the run's `training`):
        `fixed` + users × `per_user` + steps × `per_step` (no field below 0)."""
        if steps is None:
            steps = self.training.steps if self.training else 0
        return (self.fixed + self.per_user.times(users) + self.per_step.times(steps)).clipped()

    def prepare_for(self, steps: int | None = None) -> Usage | None:
        """The prepare step's share of the plan for `steps` units (default: the run's `training`;
        None: not fitted per unit)."""
        if steps is None:
            steps = self.training.steps if self.training else 0
        return (self.fixed + self.per_step.times(steps)).clipped() if self.steps else None
