"""The LLM requests each method's prepare step plans before ranking (its `training_calls` hook:
AMEM4Rec's pool training windows), for a run's users in the run's world and with the run's `--set`
knobs, as the prepare step itself would see them (bench/run/runner.py)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.protocol.knob_settings import settings_of
from bench.protocol.plan import evaluation_context
from bench.protocol.spec import EvalCase, Protocol
from graphs.hooks import TrainingPlan
from graphs.registry import METHODS, hook, method_context
from state.context import Context


def planned_training(
    methods: Sequence[str], cases: Sequence[EvalCase], protocol: Protocol, context: Context
) -> dict[str, TrainingPlan]:
    """Per LLM method declaring a `training_calls` hook, its prepare step's planned requests for the
    users of `cases` (methods without the hook are left out)."""
    declaring = [m for m in methods if METHODS[m].kind == "llm" and hook(m, "training_calls")]
    if not declaring or not cases:
        return {}
    knobs = settings_of(protocol.knobs, declaring)
    world = evaluation_context(context, protocol, cases)  # cold scenarios train in their own world
    users = [case.user_id for case in cases]
    plans = {}
    for method in declaring:
        declared = hook(method, "training_calls")
        assert declared is not None
        ctx = knobs.apply(method, method_context(method, world))
        plans[method] = declared(ctx, users, protocol.scenario, protocol.seed)
    return plans
