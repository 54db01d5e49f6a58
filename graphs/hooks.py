"""The types of the lifecycle hooks a method declares in its `graphs/<method>/spec.py`.

The harness (`bench`) builds these requests; hooks never see a held-out target, only users,
their requests and the run's folder. Nothing here imports the harness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from state.context import Context

ProgressCallback = Callable[[str, int, int], None]
"""Called as (label, done so far, total) while a hook works; the label names the phase."""


@dataclass(frozen=True)
class PrepareRequest:
    """What a `prepare` hook gets: the run it prepares a method for."""

    method: str
    """The registered method name (a method and its ablations prepare separately)."""
    users: Sequence[str]
    """The users under test, in the run's order."""
    scenario: str
    """The run's scenario (decides which interactions a method may see)."""
    protocol: Mapping[str, Any]
    """The run's protocol (dataset, candidates, seed, scenario, users, llm): key for reuse."""
    work_dir: Path
    """The run's output folder; a hook keeps its own files below it, so a rerun resumes."""
    concurrency: int
    """How many LLM calls the hook may have in flight."""
    context: Context
    """The run's context with the method's overrides applied."""
    ranked: frozenset[str] = frozenset()
    """Users whose ranking is already in the results log (a resumed run)."""
    on_progress: ProgressCallback | None = None
    """Progress reporting; None when nobody watches."""


@dataclass
class Prepared:
    """What a `prepare` hook returns."""

    context: Context
    """The context the method's users are ranked with (e.g. pointed at its trained memory)."""
    metrics: dict[str, Any] = field(default_factory=dict)
    """Merged into the method's metrics.json entry (e.g. `stage_w` or `training` totals)."""


@dataclass(frozen=True)
class AheadPart:
    """A part of a method's `prepare_ahead` work that reads nothing another step writes (a method's
    `ahead_parts` hook lists them): `recgraph bench --workers N` runs each as a step of its own before
    the `prepare_ahead` step, which then finds what it made on disk (the router's: in its training
    world's cache)."""

    name: str
    """The part's name in the plan and in its progress rows (e.g. "training-world sasrec")."""
    cost: float
    """About its CPU seconds in `make bench`'s run (as `MethodSpec.prepare_cost`: only the order in
    which ready steps start reads it)."""
    run: Callable[[PrepareRequest], object]
    """Does the part for the run (the request its method's `prepare_ahead` step gets; picklable: a
    module-level function or a `partial` of one; it runs in the step's process). What it returns is
    not read."""
    item_vectors: bool = False
    """Whether it reads the catalog's item vectors: its step then waits for the run's item-vector
    step, as a method's with `MethodSpec.item_vectors` does (one process writes them at a time)."""


@dataclass(frozen=True)
class PerfRequest:
    """What a `perf_extras` hook gets: the timed pass it adds figures to."""

    requests: Sequence[dict[str, Any]]
    """The `RecInput`s of the timed pass (user, candidates, scenario)."""
    scenario: str
    """The run's scenario."""
    context: Context
    """The perf context (simulator backend) with the method's overrides applied."""
    concurrency: int
    """Invocations in flight."""
    outputs: Sequence[dict[str, Any]]
    """The timed pass's graph outputs, in request order."""


@dataclass(frozen=True)
class CallPlan:
    """LLM requests one user costs a method, without retries (a method's `llm_calls` hook returns it).

    `recgraph bench` multiplies it by the users still to run and prints the total before a paid
    backend starts. A plan counts one request per agent answer; retries (at most
    `Context.llm_retries` more per answer) come on top and are printed as the upper bound. Loops whose
    length the model decides are counted at their budget ("at most")."""

    per_user: int
    """Requests per user (the budget when `at_most`)."""
    at_most: bool = False
    """True when the graph may stop earlier (a planner's loop, tools that need no model)."""
    note: str = ""
    """What else costs calls and is not counted (e.g. training before ranking)."""


@dataclass(frozen=True)
class TrainingPlan:
    """LLM requests a method's prepare step plans before ranking (a method's `training_calls` hook
    returns it): `steps` units of work (AMEM4Rec: training windows) of at most `per_step` requests
    each, the first `light_steps` of them at most one (AMEM4Rec: the first round meets an empty pool
    and asks only the extractor). Counted for the run's users, split and knobs; a prepare step that
    finds its work done (a resumed pool) asks none of them."""

    steps: int
    """Units of work the prepare step plans (e.g. windows)."""
    step: str
    """What one unit is, plural (e.g. "windows")."""
    per_step: int
    """Requests at most per unit."""
    light_steps: int = 0
    """Units among `steps` that ask at most one request."""
    note: str = ""
    """How the units were counted, in words (e.g. "latest 5 per user of 30 users, w=3")."""

    @property
    def calls(self) -> int:
        """Requests at most, before retries."""
        light = min(self.light_steps, self.steps)
        return light * min(1, self.per_step) + (self.steps - light) * self.per_step
