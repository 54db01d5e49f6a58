"""Scoring rules of the trained baselines: SASRec and GRU4Rec (cornac), LightGCN (PyTorch Geometric).

Each model is trained once per process and dataset (`fitted_model`, cached on disk by
`agents.baselines.sequential` / `agents.baselines.lightgcn`), then scores exactly the candidates it
is given. The cold-start fallback is `agents.baselines.trained`'s: popularity for a user with no warm
visible item, cold candidates after the warm ones; `fallback_details` counts both per user.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agents.baselines.classic import Scorer, popularity_scores
from agents.baselines.trained import (
    cache_path,
    cold_details,
    knobs,
    library_version,
    training_data,
    warm_mask,
    with_cold_fallback,
)
from state.baselines.context import BaselinesContext
from world.environment import Environment

TRAINED = ("sasrec", "gru4rec", "lightgcn")
"""The trained baselines, in registry order."""


def model_key(ctx: BaselinesContext, name: str) -> str:
    """The process-wide resource key of baseline `name` trained with `ctx`'s knobs."""
    return f"{name}:{sorted(knobs(name, ctx).items())}"


def model_file(env: Environment, ctx: BaselinesContext, name: str) -> Path:
    """Where baseline `name` trained with `ctx`'s knobs on `env` is cached (it may not exist yet)."""
    return cache_path(env, name, knobs(name, ctx), library_version(name), training_data(env))


def is_trained(env: Environment, ctx: BaselinesContext, name: str) -> bool:
    """Whether baseline `name` is trained for `env` under `ctx`'s knobs: built in this process or
    saved in the dataset's cache (so reading it trains nothing)."""
    return env.peek(model_key(ctx, name)) is not None or model_file(env, ctx, name).is_file()


def fitted_model(env: Environment, ctx: BaselinesContext, name: str) -> Any:
    """Baseline `name` trained with `ctx`'s knobs on `env` (once per process; cached on disk)."""
    key = model_key(ctx, name)
    if name == "lightgcn":
        from agents.baselines.lightgcn import train_lightgcn

        return env.resource(key, lambda: train_lightgcn(env, ctx))
    from agents.baselines.sequential import train_sequential

    return env.resource(key, lambda: train_sequential(env, ctx, name))


def warm_history(env: Environment, history: Sequence[str]) -> list[str]:
    """The visible history items that have training interactions (the model knows them)."""
    keep = warm_mask(env, history)
    return [item for item, warm in zip(history, keep, strict=True) if warm]


def is_cold_user(env: Environment, history: Sequence[str]) -> bool:
    """True when the model cannot score the user: no visible item has a training interaction (in the
    classic scenario every user with training interactions sees them, so this covers LightGCN's
    users too)."""
    return not warm_history(env, history)


def model_scores(
    env: Environment, ctx: BaselinesContext, name: str, user: str, history: Sequence[str],
    items: Sequence[str], scenario: str,
) -> np.ndarray:  # fmt: skip
    """The trained model's raw score of each item."""
    rows = [env.item_index[i] for i in items]
    warm = [env.item_index[i] for i in warm_history(env, history)]
    model = fitted_model(env, ctx, name)
    if name != "lightgcn":
        return model.scores(warm)[rows]
    own = env.user_index.get(user)
    if scenario == "classic" and own is not None and env.train_matrix[own].nnz > 0:
        vector = model.users[own]
    else:
        vector = model.items[warm].mean(axis=0)
    return model.items[rows] @ vector


def make_scorer(name: str) -> Scorer:
    """The scorer of trained baseline `name`, with the cold-start fallback."""

    def score(
        env: Environment, ctx: BaselinesContext, user: str, history: Sequence[str],
        items: Sequence[str], scenario: str,
    ) -> np.ndarray:  # fmt: skip
        if is_cold_user(env, history):
            return popularity_scores(env, items)
        return with_cold_fallback(env, items, model_scores(env, ctx, name, user, history, items, scenario))

    score.__doc__ = f"{name}'s scores, popularity for a cold user, cold candidates last."
    return score


def fallback_details(env: Environment, history: Sequence[str], items: Sequence[str]) -> dict[str, int]:
    """Per-user counts of the fallback: `cold_user` (0/1) and `cold_candidates`."""
    return cold_details(env, items, is_cold_user(env, history))


RANKS_BY = {
    "sasrec": "SASRec (cornac) over the recent history",
    "gru4rec": "GRU4Rec (cornac) over the recent history",
    "lightgcn": "LightGCN (PyTorch Geometric) embeddings",
}
"""What each trained baseline ranks by (the trace's words)."""
