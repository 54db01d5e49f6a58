"""Metrics against hand-computed values."""

import math

import pytest

from bench.protocol.metrics import cutoffs, mean_metrics, rank_of, user_metrics


def test_rank_one_of_ten() -> None:
    m = user_metrics(1, 10)
    assert m == {
        "hit@1": 1.0,
        "hit@3": 1.0,
        "hit@5": 1.0,
        "ndcg@3": 1.0,
        "ndcg@5": 1.0,
        "mrr": 1.0,
        "avg_hr": 1.0,
    }


def test_rank_three_of_ten() -> None:
    m = user_metrics(3, 10)
    # 1/log2(4) = 0.5 exactly; hit@1 misses, hit@3 and hit@5 hit -> avg_hr 2/3.
    assert m["hit@1"] == 0.0 and m["hit@3"] == 1.0 and m["hit@5"] == 1.0
    assert m["ndcg@3"] == pytest.approx(0.5)
    assert m["ndcg@5"] == pytest.approx(0.5)
    assert m["mrr"] == pytest.approx(1 / 3)
    assert m["avg_hr"] == pytest.approx(2 / 3)


def test_rank_four_of_ten_is_outside_ndcg_at_3() -> None:
    m = user_metrics(4, 10)
    assert m["ndcg@3"] == 0.0
    assert m["ndcg@5"] == pytest.approx(1 / math.log2(5))  # 0.4307
    assert m["ndcg@5"] == pytest.approx(0.430677, abs=1e-6)
    assert m["avg_hr"] == pytest.approx(1 / 3)


def test_rank_seven_of_twenty_reports_k10() -> None:
    m = user_metrics(7, 20)
    assert cutoffs(20) == (1, 3, 5, 10)
    assert m["hit@5"] == 0.0 and m["hit@10"] == 1.0
    assert m["ndcg@10"] == pytest.approx(1 / 3)  # 1/log2(8)
    assert "hit@10" not in user_metrics(7, 10)


def test_rank_out_of_range_is_refused() -> None:
    with pytest.raises(ValueError, match=r"rank 11 outside 1\.\.10"):
        user_metrics(11, 10)


def test_rank_of_and_missing_target() -> None:
    assert rank_of("b", ["a", "b", "c"]) == 2
    assert rank_of("z", ["a", "b"]) is None


def test_a_target_missing_from_the_candidates_scores_zero_everywhere() -> None:
    # The `retrieval` source ranks I0 as retrieved: a missed target is in no ranking.
    missed = user_metrics(None, 20)
    assert set(missed) == set(user_metrics(1, 20))
    assert all(value == 0.0 for value in missed.values())
    # Worked mean: ranks 1 and 2 of 10 plus one missed user: hit@1 = 1/3, mrr = (1 + 1/2 + 0)/3 = 0.5.
    means = mean_metrics([user_metrics(1, 10), user_metrics(2, 10), user_metrics(None, 10)])
    assert means["hit@1"] == pytest.approx(1 / 3)
    assert means["mrr"] == pytest.approx(0.5)
    assert means["ndcg@3"] == pytest.approx((1 + 1 / math.log2(3)) / 3)


def test_mean_over_users_worked_example() -> None:
    # Ranks 1, 2, 4 of 10: hit@1 = 1/3; mrr = (1 + 1/2 + 1/4)/3 = 0.583333;
    # ndcg@3 = (1 + 1/log2(3) + 0)/3 = (1 + 0.630930)/3 = 0.543643.
    means = mean_metrics(user_metrics(r, 10) for r in (1, 2, 4))
    assert means["hit@1"] == pytest.approx(1 / 3)
    assert means["mrr"] == pytest.approx(0.583333, abs=1e-6)
    assert means["ndcg@3"] == pytest.approx(0.543643, abs=1e-6)
    assert means["hit@5"] == pytest.approx(1.0)


def test_mean_is_independent_of_order() -> None:
    rows = [user_metrics(r, 10) for r in (1, 2, 3, 5, 7, 9, 10, 4)]
    assert mean_metrics(rows) == mean_metrics(list(reversed(rows)))
