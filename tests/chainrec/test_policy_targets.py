"""ChainRec's learned planner, what it learns from: the supported expert (among a task's near-best
chains, the one the training tasks back, instead of the lucky shortest), preference pairs with a
real AvgHR gap weighted by the reward gap, the reward's token-cost term, and a policy trained over
another tool catalog (its actions, used-tool features and checkpoint config come from the catalog)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from agents.chainrec.offline.policy_data import (
    ChainSupport,
    best_chain,
    chain_support,
    expert_pairs,
    gap_pairs,
)
from agents.chainrec.offline.policy_store import write_checkpoint
from agents.chainrec.offline.policy_train import TrainConfig, dpo_loss, train_policy
from agents.chainrec.offline.reward import reward
from agents.chainrec.online.catalog import BY_NAME, CANDIDATE_RANK
from agents.chainrec.online.features import feature_dim
from agents.chainrec.online.learned_planner import LearnedPlanner
from agents.chainrec.online.mask import feasibility
from agents.chainrec.online.planning import PlanView
from agents.chainrec.online.policy import ActionSpace
from state.chainrec.context import ChainRecContext

FAST = TrainConfig(
    hidden=32, sft_epochs=300, dpo_epochs=20, eval_every=20, heldout_fraction=0.25, state="scenario"
)
"""The toy tasks differ in their task facts only before any tool runs: the scenario-aware state reads them."""


def _row(user: str, chains: dict[str, float], quality: dict[str, float] | None = None) -> dict[str, Any]:
    """A minimal trajectory row over tools 0..2 (ranking keys = chain codes)."""
    return {
        "user_id": user,
        "tools": ["LongTermPreference", "ItemSemantic", "ItemProfile"],
        "rankings": {code: {"avg_hr": value} for code, value in (quality or {}).items()},
        "chains": [[code, code, value] for code, value in chains.items()],
    }


def test_supported_expert_picks_the_chain_the_training_tasks_back() -> None:
    # Task a: "0" and "1.2" tie for the best reward; hindsight takes the shorter "0".
    # Across tasks "1.2" earns more on average, so the supported expert takes it.
    a = _row("a", {"0": 0.66, "1.2": 0.66, "2": 0.0})
    b = _row("b", {"0": 0.0, "1.2": 0.98, "2": 0.33})
    support = chain_support([a, b])
    assert support.by == "tool_set" and support.means == {
        "LongTermPreference": pytest.approx(0.33),
        "ItemProfile+ItemSemantic": pytest.approx(0.82),
        "ItemProfile": pytest.approx(0.165),
    }
    assert best_chain(a) == ("0", 0.66)
    assert best_chain(a, support) == ("1.2", 0.66)
    # Within epsilon of the best, the better-supported chain wins even at a lower reward.
    c = _row("c", {"0": 0.99, "1.2": 0.66})
    assert best_chain(c, support, 0.0) == ("0", 0.99)
    assert best_chain(c, support, 0.34) == ("1.2", 0.66)


def test_support_pools_a_sets_orders_and_drops_sets_few_tasks_scored() -> None:
    a = _row("a", {"1.2": 0.6, "2.1": 0.6, "0": 0.3})
    b = _row("b", {"2.1": 0.9, "0": 0.0})
    c = _row("c", {"0": 0.3, "1": 1.0})
    # By tool set: {1, 2} is 0.6 on a (both orders), 0.9 on b -> 0.75 over 2 tasks; LongTermPreference
    # (0.3 + 0.0 + 0.3) / 3 = 0.2; ItemSemantic alone was scored on 1 task of the best-covered 3 (< half).
    by_set = chain_support([a, b, c])
    assert by_set.means == {
        "ItemProfile+ItemSemantic": pytest.approx(0.75),
        "LongTermPreference": pytest.approx(0.2),
    }
    assert by_set.of(a, "1.2") == by_set.of(a, "2.1") == pytest.approx(0.75)
    assert by_set.of(c, "1") == -float("inf")
    # By ordered chain (before tool sets): "1.2" was scored on one task only and has no support.
    by_chain = chain_support([a, b, c], "chain")
    assert by_chain.means == {
        "ItemProfile>ItemSemantic": pytest.approx(0.75),
        "LongTermPreference": pytest.approx(0.2),
    }
    with pytest.raises(ValueError, match="unknown support 'order'"):
        chain_support([a], "order")


def test_gap_pairs_need_an_avg_hr_gap_and_carry_the_reward_gap() -> None:
    # "0" and "0.1" tie in AvgHR: only the length differs, so they never form a pair.
    row = _row(
        "a",
        {"0": 0.657, "0.1": 0.647, "2": -0.003, "1": 0.33},
        {"0": 0.66, "0.1": 0.66, "2": 0.0, "1": 0.333},
    )
    pairs = {(c, r): gap for c, r, gap in gap_pairs(row, 10, np.random.default_rng(0), 0.3)}
    assert pairs == {
        ("0", "2"): pytest.approx(0.66),
        ("0.1", "2"): pytest.approx(0.65),
        ("0", "1"): pytest.approx(0.327),
        ("0.1", "1"): pytest.approx(0.317),
        ("1", "2"): pytest.approx(0.333),
    }
    wide = {(c, r) for c, r, _ in gap_pairs(row, 10, np.random.default_rng(0), 0.5)}
    assert wide == {("0", "2"), ("0.1", "2")}
    # With the training tasks' support, a pair the population orders the other way is dropped:
    # here ItemSemantic ("1") beats LongTermPreference ("0") on average, so ("0", "1") goes.
    means = {
        "LongTermPreference": 0.3,
        "LongTermPreference>ItemSemantic": 0.5,
        "ItemSemantic": 0.4,
        "ItemProfile": 0.0,
    }
    support = ChainSupport(means, "chain")
    agreed = {(c, r) for c, r, _ in gap_pairs(row, 10, np.random.default_rng(0), 0.3, support)}
    assert agreed == {("0", "2"), ("0.1", "2"), ("0.1", "1"), ("1", "2")}


def test_expert_pairs_set_the_expert_against_chains_a_real_gap_below() -> None:
    row = _row(
        "a",
        {"0": 0.657, "0.1": 0.647, "2": -0.003, "1": 0.33},
        {"0": 0.66, "0.1": 0.66, "2": 0.0, "1": 0.333},
    )
    # "0" ties "0.1" in AvgHR, so "0.1" is never rejected against it.
    pairs = expert_pairs(row, "0.1", 5, np.random.default_rng(0), 0.3)
    assert pairs == [("0.1", "2", pytest.approx(0.65)), ("0.1", "1", pytest.approx(0.317))]
    assert expert_pairs(row, "0.1", 1, np.random.default_rng(0), 0.3)[0][0] == "0.1"
    assert expert_pairs(row, "2", 5, np.random.default_rng(0), 0.3) == []


def test_weighted_dpo_loss_weights_each_pair() -> None:
    args = (torch.tensor([-1.0, -3.0]), torch.tensor([-2.0, -1.0]), torch.zeros(2), torch.zeros(2), 1.0)
    losses = [float(dpo_loss(*[a[i : i + 1] for a in args[:4]], 1.0)) for i in range(2)]
    weighted = float(dpo_loss(*args, weights=torch.tensor([3.0, 1.0])))
    assert weighted == pytest.approx((3 * losses[0] + losses[1]) / 4, abs=1e-6)


def test_reward_subtracts_the_token_cost() -> None:
    assert reward(2 / 3, 3, 0.01) == pytest.approx(2 / 3 - 0.03)
    assert reward(2 / 3, 3, 0.01, tokens=500, cost_lam=1e-4) == pytest.approx(2 / 3 - 0.03 - 0.05)
    with pytest.raises(ValueError):
        reward(1.0, 1, 0.01, tokens=-1)


def test_a_policy_over_another_catalog_takes_its_actions_from_the_catalog(
    toy_trajectory_rows: Callable[..., list[dict[str, Any]]], tmp_path: Path
) -> None:
    names = ("LongTermPreference", "ItemSemantic", "ItemProfile", CANDIDATE_RANK)
    space = ActionSpace(tuple(BY_NAME[name] for name in names))
    assert space.tools == names[:3] and space.actions == names
    result = train_policy(toy_trajectory_rows(12), 3, 0.01, FAST, space=space)
    assert result.sft.w1.shape[0] == feature_dim(space.tools, "scenario") and result.sft.w2.shape[1] == 4
    assert result.curves["sft"][-1]["heldout_reward"] == pytest.approx(0.9)
    folder = write_checkpoint(
        tmp_path / "classic-small",
        {"dataset": "toy", "scenario": "classic"},
        FAST.as_dict(),
        result,
        {},
        "toy",
        space,
    )
    config = json.loads((folder / "config.json").read_text())
    assert config["actions"] == list(names)
    assert config["features"][:3] == [f"used:{name}" for name in names[:3]]
    domain = {"ratings": True, "reviews": False, "categories": True, "timestamps": True}
    mask, notes = feasibility(["ItemSemantic"], 3, domain, space.catalog)
    view = PlanView("1", ("1", "50", "181"), "classic", (), mask, notes, 3, domain)
    ctx = ChainRecContext(
        chainrec_planner="learned", chainrec_checkpoint=str(folder), chainrec_planner_state="scenario"
    )
    planner = LearnedPlanner(ctx)
    choice = planner.decide(view)
    assert set(choice.scores) == {"LongTermPreference", "ItemProfile", CANDIDATE_RANK}
