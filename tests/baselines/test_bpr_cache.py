"""BPR's factors are fitted once per training matrix and knobs, then read from the dataset's cache."""

from pathlib import Path

import numpy as np
import pytest

from agents.baselines import classic as classic_rankers
from agents.baselines.classic import bpr_cache_path, fit_bpr, train_bpr
from state.baselines.context import BaselinesContext
from world.environment import get_environment


def test_factors_are_fitted_once_and_reread_exactly(
    tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = get_environment(str(tiny_dataset_dir))
    ctx = BaselinesContext(dataset=str(tiny_dataset_dir), bpr_factors=8, bpr_iterations=20, seed=5)
    fits: list[int] = []
    monkeypatch.setattr(classic_rankers, "fit_bpr", lambda e, c: fits.append(1) or fit_bpr(e, c))
    users, items = train_bpr(env, ctx)
    assert fits == [1] and bpr_cache_path(env, ctx).is_file()
    again_users, again_items = train_bpr(env, ctx)
    assert fits == [1]
    assert np.array_equal(again_users, users) and np.array_equal(again_items, items)
    assert not list(bpr_cache_path(env, ctx).parent.glob("*.tmp.npz"))


def test_other_knobs_or_training_data_get_their_own_factors(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    ctx = BaselinesContext(dataset=str(tiny_dataset_dir), bpr_factors=8, bpr_iterations=20, seed=5)
    path = bpr_cache_path(env, ctx)
    assert (
        bpr_cache_path(env, BaselinesContext(dataset=ctx.dataset, bpr_factors=8, bpr_iterations=20, seed=6))
        != path
    )
    assert (
        bpr_cache_path(env, BaselinesContext(dataset=ctx.dataset, bpr_factors=8, bpr_iterations=21, seed=5))
        != path
    )
    original = env.train_matrix
    changed = original.tolil()
    changed[0, 0] = 0.0 if changed[0, 0] else 1.0
    env.train_matrix = changed.tocsr()
    try:
        assert bpr_cache_path(env, ctx) != path
    finally:
        env.train_matrix = original
