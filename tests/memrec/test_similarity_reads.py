"""Curation reads a user neighbour's memory only when it may still rank: score ranges that hold
every score, and the same neighbours, order and scores as reading every memory."""

import random
from pathlib import Path

import numpy as np
import pytest

from agents.memrec.curation import curate, select_top
from agents.memrec.feature_index import feature_index
from agents.memrec.features import NeighbourFeatures, neighbour_features
from agents.memrec.rule_bounds import score_bounds
from agents.memrec.rule_files import load_rule_set, shipped_rule_sets
from agents.memrec.rule_scoring import score_neighbours
from agents.memrec.similarity_reads import SIMILARITY, read_needed
from world.environment import Environment, get_environment
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


@pytest.fixture(scope="module")
def synth_env(tmp_path_factory: pytest.TempPathFactory) -> Environment:
    """200 users, 120 items with categories and times: 2-hop neighbourhoods of most users."""
    folder: Path = tmp_path_factory.mktemp("reads") / "reads"
    write_synth(generate(SynthSpec(users=200, items=120, interactions=2400, seed=3)), folder)
    return get_environment(str(folder))


@pytest.mark.parametrize("name", shipped_rule_sets())
def test_score_ranges_hold_every_score_inside_them(name: str) -> None:
    rule_set = load_rule_set(name)
    rng = np.random.default_rng(0)
    n = 400
    x = np.column_stack(
        [rng.random(n), rng.exponential(200, n), rng.integers(0, 8, n), rng.random(n), rng.random(n)]
    )
    is_item = rng.random(n) < 0.3
    low, high = x.copy(), x.copy()
    low[:, SIMILARITY], high[:, SIMILARITY] = 0.0, 1.0
    lo, hi = score_bounds(rule_set, low, high, is_item)
    for similarity in (0.0, 0.3, 0.6, 1.0, None):
        y = x.copy()
        y[:, SIMILARITY] = rng.random(n) if similarity is None else similarity
        scores = score_neighbours(rule_set, y, is_item)
        assert np.all(lo <= scores) and np.all(scores <= hi)
    # Known features: a range as narrow as the score itself (up to the slack).
    lo, hi = score_bounds(rule_set, x, x, is_item)
    assert np.allclose(lo, score_neighbours(rule_set, x, is_item), rtol=1e-8)
    assert np.allclose(hi, lo, rtol=1e-8)
    # A threshold on the unknown feature (0.5 lies inside [0, 1]) is both possible and not sure.
    unsure = load_rule_set(
        {
            "name": "t",
            "domain": "t",
            "rules": [
                {
                    "id": "r",
                    "name": "r",
                    "when": [{"feature": "memory_similarity_score", "op": ">", "value": 0.5}],
                    "effects": [{"type": "multiplier", "value": 3.0}],
                }
            ],
        }
    )
    lo, hi = score_bounds(unsure, low[:1], high[:1], is_item[:1])
    assert lo[0] == pytest.approx(1.0) and hi[0] == pytest.approx(3.0)


@pytest.mark.parametrize("name", shipped_rule_sets())
def test_curation_keeps_what_reading_every_memory_keeps(synth_env: Environment, name: str) -> None:
    index = feature_index(synth_env)
    rule_set = load_rule_set(name)
    rng = random.Random(0)
    read = total = 0
    for user in rng.sample(list(synth_env.user_ids), 6):
        candidates = rng.sample(sorted(synth_env.item_index), 10)
        for k, floor in ((16, 4), (9, 4), (3, 1)):
            full = neighbour_features(index, user, candidates)
            scores = score_neighbours(rule_set, full.matrix, full.is_item)
            keep = select_top(scores, full.is_item, k, floor, floor)
            got = curate(index, rule_set, user, candidates, k, floor, floor, reads_per_kept=None)
            assert got.node_ids == full.node_ids[keep].tolist() and got.pool == len(full.node_ids)
            assert np.array_equal(got.scores, scores[keep])
            assert np.array_equal(got.features, full.matrix[keep])
            lazy = neighbour_features(index, user, candidates, user_similarity=False)
            users = ~lazy.is_item
            assert np.isnan(lazy.matrix[users, SIMILARITY]).all()
            unread = read_needed(index, rule_set, lazy, k)
            assert np.array_equal(lazy.matrix[~unread], full.matrix[~unread])
            read += int((users & ~unread).sum())
            total += int(users.sum())
    assert read < 0.4 * total  # here 20-30%: most neighbourhoods are decided long before the last read


def test_past_the_limit_the_users_read_are_the_best_ranges_and_rank_first(synth_env: Environment) -> None:
    index = feature_index(synth_env)
    rule_set = load_rule_set("generic")
    candidates = sorted(synth_env.item_index)[:10]

    def lazy_reads(user: str, cap: int | None) -> tuple[NeighbourFeatures, np.ndarray]:
        lazy = neighbour_features(index, user, candidates, user_similarity=False)
        return lazy, read_needed(index, rule_set, lazy, 5, cap)

    def exact_reads(user: str) -> int:
        lazy, unread = lazy_reads(user, None)
        return int((~unread & ~lazy.is_item).sum())

    user = next(u for u in synth_env.user_ids if exact_reads(u) > 20)  # most users here
    lazy, unread = lazy_reads(user, 20)
    users = np.flatnonzero(~lazy.is_item)
    read = users[~unread[users]]
    assert len(read) == 20
    low, high = lazy.matrix[users].copy(), lazy.matrix[users].copy()
    low[:, SIMILARITY], high[:, SIMILARITY] = 0.0, 1.0
    upper = score_bounds(rule_set, low, high, lazy.is_item[users])[1]
    assert upper[~unread[users]].min() >= upper[unread[users]].max()  # the best upper bounds were read
    got = curate(index, rule_set, user, candidates, 5, 2, 2, reads_per_kept=4)
    kept = [node for node, item in zip(got.node_ids, got.is_item, strict=True) if not item]
    assert set(kept) <= set(lazy.node_ids[read].tolist()) and len(kept) >= 2
