"""The size-dependent rules that let the trained baselines train on a large catalog: a seeded sample
of at most `VALIDATION_USERS` users' validation targets, and at most `MAX_BATCHES` LightGCN batches
per epoch; a catalog under both limits (ml-100k: 943 users, ~98k training interactions) is unchanged.
Uses test_trained's small catalog (24 split users)."""

from __future__ import annotations

import pytest

from agents.baselines import trained
from agents.baselines.lightgcn import MAX_BATCHES, batch_size, train_lightgcn
from agents.baselines.sequential import sessions
from agents.baselines.trained import knobs, training_data, validation_sample
from tests.baselines.test_trained import catalog, context  # noqa: F401  (the fixture)
from world.environment import get_environment


def test_a_validation_set_within_the_limit_is_kept_whole_and_in_order() -> None:
    validation = {f"u{k}": k for k in range(10)}
    assert validation_sample(validation, size=10) is validation


def test_a_larger_validation_set_is_a_seeded_ordered_sample_of_its_users() -> None:
    validation = {f"u{k}": 100 + k for k in range(50)}
    sample = validation_sample(validation, size=7)
    assert len(sample) == 7
    assert all(validation[user] == item for user, item in sample.items())
    keys = list(sample)
    assert keys == sorted(keys, key=lambda user: int(user[1:]))  # original order
    assert validation_sample(validation, size=7) == sample  # same draw every time
    assert sample != dict(list(validation.items())[:7])  # a draw, not the first users


def test_ml100k_sized_graphs_keep_the_batch_size_larger_ones_get_fewer_batches() -> None:
    settings = {"batch_size": 2048}
    assert batch_size(settings, 98_114) == 2048  # ml-100k's training interactions: unchanged
    assert batch_size(settings, 2048 * MAX_BATCHES) == 2048
    big = batch_size(settings, 650_000)
    assert big == 13_542  # ceil(650000 / 48)
    assert -(-650_000 // big) == MAX_BATCHES


def test_training_checks_only_the_sampled_validation_users(
    catalog: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(trained, "VALIDATION_USERS", 5)
    env = get_environment(catalog)
    data = training_data(env)
    assert len(data.validation) == 5 and len(data.sequences) > 5
    ctx = context(catalog)
    _, val_set = sessions(env, data, knobs("sasrec", ctx)["max_len"])
    assert len(val_set.sessions) == 5
    model = train_lightgcn(env, ctx)
    assert model.info["validation_users"] == 5
