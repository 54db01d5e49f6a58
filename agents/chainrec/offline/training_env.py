"""ChainRec's training world: the dataset with every user's held-out test and validation
interactions removed.

The offline stage (trajectories, planner training, the fusion fit; the routers' learned planners
too) works on *training tasks*: a user's last training interaction with its own candidates.
Removing each user's test and validation interactions and splitting again makes the last training
interaction the new held-out target, so every environment tool (get_user, get_item, get_reviews and
the statistics they compute) sees exactly what came before it, and neither the test nor the
validation interaction is in the training world at all: no learner trains on an evaluated user's
validation interaction (the rule of docs/benchmarking.md, "What learners learn from").
"""

from __future__ import annotations

from dataclasses import replace

from world.data import Dataset, PresplitUser
from world.environment import Environment
from world.split import held_out_events

TRAINING_SUFFIX = "#chainrec-train-before-valid"
"""Appended to the dataset's name and source (a cache key of its own)."""


def training_dataset(env: Environment) -> Dataset:
    """`env`'s dataset without any user's test and validation interactions (the last training
    interaction becomes the target of the split that follows)."""
    data = env.dataset
    held_out = held_out_events(env.cases)
    kept = [e for e in data.interactions if (e.user_id, e.item_id, e.timestamp) not in held_out]
    presplit = None
    if data.presplit is not None:
        presplit = {
            user: PresplitUser(fixed.history[:-2], fixed.history[-2], fixed.history[-1])
            for user, fixed in data.presplit.items()
            if len(fixed.history) >= 2
        }
        tests = {(user, fixed.target) for user, fixed in data.presplit.items()}
        tests |= {(user, fixed.valid) for user, fixed in data.presplit.items() if fixed.valid is not None}
        kept = [e for e in kept if (e.user_id, e.item_id) not in tests or e.user_id not in presplit]
    return replace(
        data,
        name=data.name + TRAINING_SUFFIX,
        source=data.source + TRAINING_SUFFIX,
        interactions=kept,
        presplit=presplit,
    )


def training_environment(env: Environment) -> Environment:
    """The process-wide training environment of `env` (built once; it shares `env`'s item vectors)."""

    def build() -> Environment:
        train = Environment(training_dataset(env))
        train.resource("item_vectors", env.item_vectors)
        return train

    return env.resource("chainrec_training_env", build)
