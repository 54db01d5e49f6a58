"""`percentile_ranks` (every fusion signal's normalisation) against hand-computed ranks and, bit for
bit, against scipy's `rankdata(method="average")`, which it replaced for speed."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from agents.chainrec.online.evidence import percentile_ranks


def test_ranks_by_hand_ties_share_their_mean_rank() -> None:
    # sorted: 1.0 (rank 0), 2.0 and 2.0 (ranks 1 and 2 -> 1.5), 5.0 (rank 3); divided by n - 1 = 3
    assert percentile_ranks([2.0, 5.0, 1.0, 2.0]).tolist() == [0.5, 1.0, 0.0, 0.5]
    assert percentile_ranks([7.0, 7.0, 7.0]).tolist() == [0.5, 0.5, 0.5]
    assert percentile_ranks([3.0]).tolist() == [0.5] and percentile_ranks([]).tolist() == []


def test_equal_to_scipys_average_ranks_bit_for_bit() -> None:
    rng = np.random.default_rng(7)
    for trial in range(3000):
        size = int(rng.integers(2, 30))
        if trial % 2:
            values = rng.random(size)
        else:  # few distinct values: many ties, tiny and large scales
            values = rng.integers(0, int(rng.integers(1, 6)), size) * rng.choice([1e-9, 0.25, 3.0])
        expected = (rankdata(values, method="average") - 1.0) / (size - 1.0)
        assert np.array_equal(percentile_ranks(values), expected), values


def test_a_nan_makes_every_rank_nan_as_scipy_does() -> None:
    assert np.isnan(percentile_ranks([0.2, float("nan"), 0.1])).all()
