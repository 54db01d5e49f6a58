"""The size-dependent rules that let the trained baselines train on a large catalog: a seeded sample
of at most `VALIDATION_USERS` users' validation targets, at most `max_batches` LightGCN batches per
epoch and at most `sasrec_epoch_prefixes` SASRec training prefixes per epoch; a catalog under every
limit (ml-100k: 943 users, ~98k training interactions, 38,762 prefixes) is unchanged. Uses
test_trained's small catalog (24 split users)."""

from __future__ import annotations

import pytest

from agents.baselines import trained
from agents.baselines.lightgcn import MAX_BATCHES, batch_size, max_batches, train_lightgcn
from agents.baselines.sequential import prefix_budget, sessions, train_sequential
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
    assert batch_size(settings, 500_000) == 10_417  # ceil(500000 / 48): still 48 batches
    big = batch_size(settings, 650_000)  # the 50k-user synthetic catalog's training interactions
    assert max_batches(650_000) == 36  # 24,000,000 // 650,000: a batch costs more on a larger graph
    assert big == 18_056  # ceil(650000 / 36)
    assert -(-650_000 // big) == 36
    assert max_batches(10**9) == 1


def test_the_prefix_budget_leaves_cornac_as_it_was_after_training_or_a_failure() -> None:
    from cornac.models.sasrec import recom_sasrec

    every_prefix = recom_sasrec.session_seq_iter
    with pytest.raises(RuntimeError), prefix_budget(100, 32):
        assert recom_sasrec.session_seq_iter is not every_prefix
        raise RuntimeError("training failed")
    assert recom_sasrec.session_seq_iter is every_prefix
    with prefix_budget(0, 32):  # no limit: cornac's own iterator
        assert recom_sasrec.session_seq_iter is every_prefix


def test_a_prefix_budget_below_the_catalog_trains_on_fewer_prefixes(
    catalog: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from cornac.models.sasrec import recom_sasrec

    every_prefix, batches_seen = recom_sasrec.session_seq_iter, []

    def counted(*args: object, **kwargs: object) -> object:
        for batch in every_prefix(*args, **kwargs):
            batches_seen.append(len(batch[0]))
            yield batch

    monkeypatch.setattr(recom_sasrec, "session_seq_iter", counted)
    env = get_environment(catalog)
    whole = train_sequential(env, context(catalog, sasrec_epoch_prefixes=0), "sasrec")
    uncapped = list(batches_seen)
    batches_seen.clear()
    capped = train_sequential(env, context(catalog, sasrec_epoch_prefixes=40), "sasrec")
    assert whole.info["prefixes"] == capped.info["prefixes"] == sum(uncapped) // 2  # 2 epochs
    # 24 sessions: cornac's batch is min(sasrec_batch_size 32, sessions) = 24 prefixes
    assert uncapped == [24] * (2 * 120 // 24)  # 120 prefixes, every one in each of 2 epochs
    assert batches_seen == [24, 24, 24, 24]  # ceil(40 / 24) = 2 batches in each of 2 epochs


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
