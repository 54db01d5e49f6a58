"""ChainRec's learned planner, offline: the DPO loss against a hand-computed value, trajectory
log-probabilities, SFT fitting a toy set, DPO widening the held-out preference margin, reproducible
weights, and the expert / preference-pair rules (Eq. 10, Eq. 11)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import torch

from agents.chainrec.offline.policy_data import best_chain, preference_pairs, prefers
from agents.chainrec.offline.policy_train import TrainConfig, dpo_loss, train_policy, trajectory_log_probs
from world import embeddings

FAST = TrainConfig(
    hidden=32,
    sft_epochs=150,
    dpo_epochs=40,
    dpo_lr=1e-3,
    eval_every=10,
    heldout_fraction=0.25,
    pair_mode="best",
    pairs_per_task=4,
    state="scenario",
)
"""The toy tasks differ only in their task facts (history length) before any tool runs, so the
training machinery is checked on the scenario-aware state that reads them."""


def test_dpo_loss_matches_a_hand_computed_value() -> None:
    # pair 1: margin (−1 − −1.5) − (−2 − −1.5) = 1.0 -> −log σ(0.1) = log(1 + e^−0.1) = 0.644397
    # pair 2: margin (−3 − −2) − (−1 − −2) = −2.0 -> −log σ(−0.2) = log(1 + e^0.2) = 0.798139
    loss = dpo_loss(
        torch.tensor([-1.0, -3.0]),
        torch.tensor([-2.0, -1.0]),
        torch.tensor([-1.5, -2.0]),
        torch.tensor([-1.5, -2.0]),
        0.1,
    )
    assert float(loss) == pytest.approx((0.644397 + 0.798139) / 2, abs=1e-6)


def test_trajectory_log_probs_sum_the_chosen_actions_per_trajectory() -> None:
    log_probs = torch.log(torch.tensor([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]))
    sums = trajectory_log_probs(log_probs, [[(0, 1), (1, 2)], [(2, 0)]])
    assert sums.tolist() == pytest.approx([math.log(0.5 * 0.5), math.log(0.1)])


def test_expert_and_pairs_prefer_reward_then_fewer_steps(
    toy_trajectory_row: Callable[[int], dict[str, Any]],
) -> None:
    row = toy_trajectory_row(1)
    assert best_chain(row) == ("2", 0.9)
    assert prefers(("0", 0.5), ("0.1", 0.5)) and not prefers(("0.1", 0.5), ("0", 0.5))
    assert prefers(("0.1", 0.6), ("0", 0.5))
    tied = {**row, "chains": [["0.1", "x", 0.5], ["1", "x", 0.5], ["2.0.1", "x", 0.5]]}
    assert best_chain(tied)[0] == "1"
    pairs = preference_pairs(tied, 5, np.random.default_rng(0))
    assert sorted(pairs) == [("1", "0.1"), ("1", "2.0.1")]
    spread = preference_pairs(row, 8, np.random.default_rng(0), mode="any")
    assert len(spread) == 8 and len(set(spread)) == 8
    rewards = {code: value for code, _, value in row["chains"]}
    assert all(prefers((c, rewards[c]), (r, rewards[r])) for c, r in spread)
    assert any(c != "2" for c, _ in spread)  # not only the best chain is ever preferred


@pytest.mark.parametrize("mode", ["best", "any", "gap", "expert"])
def test_sft_fits_the_toy_set_and_dpo_widens_the_heldout_margin(
    mode: str, toy_trajectory_rows: Callable[..., list[dict[str, Any]]]
) -> None:
    result = train_policy(toy_trajectory_rows(), max_steps=3, lam=0.01, config=replace(FAST, pair_mode=mode))
    sft_end = result.curves["sft"][-1]
    assert sft_end["train_accuracy"] == 1.0
    assert sft_end["heldout_accuracy"] == 1.0
    assert sft_end["heldout_reward"] == pytest.approx(0.9)
    margins = [p["heldout_margin"] for p in result.curves["dpo"]]
    assert margins[-1] > margins[0]
    if mode == "best":
        assert result.data["dpo_pairs"] == 4 * result.data["train_tasks"]


def test_training_is_reproducible(toy_trajectory_rows: Callable[..., list[dict[str, Any]]]) -> None:
    first = train_policy(toy_trajectory_rows(8), max_steps=3, lam=0.01, config=FAST)
    second = train_policy(toy_trajectory_rows(8), max_steps=3, lam=0.01, config=FAST)
    for a, b in ((first.sft, second.sft), (first.dpo, second.dpo)):
        assert a is not None and b is not None
        for name in ("w1", "b1", "w2", "b2"):
            assert np.array_equal(getattr(a, name), getattr(b, name))
    other = train_policy(
        toy_trajectory_rows(8), max_steps=3, lam=0.01, config=TrainConfig(**{**FAST.as_dict(), "seed": 1})
    )
    assert not np.array_equal(first.sft.w1, other.sft.w1)


def test_training_gives_the_encoder_back_once_its_lines_are_embedded(
    toy_trajectory_rows: Callable[..., list[dict[str, Any]]],
) -> None:
    embeddings.embed_texts(["loaded before the training"])
    assert embeddings._onnx_model.cache_info().currsize == 1
    result = train_policy(toy_trajectory_rows(6), max_steps=3, lam=0.01, config=FAST)
    # the state vectors read only the lines embedded first: the encoder left before the training
    assert result.sft is not None and embeddings._onnx_model.cache_info().currsize == 0
