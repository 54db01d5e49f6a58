"""bench.stats.significance against worked examples: seeded bootstrap, exact paired permutation tests,
Holm."""

import math

import pytest

from bench.protocol.metrics import metric_order
from bench.stats import significance as stats
from bench.stats.holm import holm

# ndcg@5 of twelve users whose targets were ranked 1, 2, 3, 6, 1, 4, 2, 10, 1, 5, 7, 3 of 10.
NDCG5 = [1 / math.log2(r + 1) if r <= 5 else 0.0 for r in (1, 2, 3, 6, 1, 4, 2, 10, 1, 5, 7, 3)]


def rows(values: list[float], metric: str = "m") -> dict[str, dict[str, float]]:
    """Per-user rows u0, u1, ... with one metric."""
    return {f"u{i}": {metric: v} for i, v in enumerate(values)}


def test_seeded_bootstrap_ci_on_a_fixed_vector_equals_the_stored_value() -> None:
    # Stored from scipy 1.17 (percentile method, 9999 resamples, seed 0); mean 0.50662.
    assert stats.BOOTSTRAP_RESAMPLES == 9999 and stats.SEED == 0
    low, high = stats.bootstrap_ci(NDCG5)
    assert (low, high) == pytest.approx((0.29828240603757084, 0.707690239143187), abs=1e-12)
    assert stats.bootstrap_ci(NDCG5) == [low, high]  # seeded: the same every time
    assert stats.bootstrap_ci(NDCG5, seed=1) != [low, high]


def test_bootstrap_degenerate_inputs() -> None:
    assert stats.bootstrap_ci([0.7]) is None  # one user: nothing to resample
    assert stats.bootstrap_ci([0.1] * 5) == [0.1, 0.1]  # no spread: exactly the value
    assert stats.bootstrap_cis([NDCG5, [0.0] * 12]) == [stats.bootstrap_ci(NDCG5), [0.0, 0.0]]


def test_intervals_do_not_depend_on_user_order() -> None:
    forward = {f"u{i:02d}": {"ndcg@5": v, "hit@1": float(v == 1.0)} for i, v in enumerate(NDCG5)}
    backward = dict(reversed(list(forward.items())))
    assert stats.metric_intervals(forward) == stats.metric_intervals(backward)
    assert stats.metric_intervals(forward)["ndcg@5"] == stats.bootstrap_ci(NDCG5)


def test_intervals_are_stored_beside_their_metric() -> None:
    summary = {"hit@1": 0.5, "ndcg@5": 0.6, "users": 2, "llm_calls": 0}
    merged = stats.with_intervals(summary, {"hit@1": [0.1, 0.9], "ndcg@5": [0.2, 0.8]})
    assert list(merged) == ["hit@1", "hit@1_ci", "ndcg@5", "ndcg@5_ci", "users", "llm_calls"]
    assert merged["ndcg@5"] == 0.6 and merged["ndcg@5_ci"] == [0.2, 0.8]


def test_exact_paired_permutation_p_values_match_hand_computation() -> None:
    # d = (1, 1, 1, 1, 0): of the 2^5 = 32 sign patterns, 2 reach a mean >= 0.8 (the zero's
    # sign does not matter), so P(>=) = 2/32 and the two-sided p = 2 * 2/32 = 0.125.
    assert stats.permutation_p_value([1, 1, 1, 1, 0], [0, 0, 0, 0, 0]) == pytest.approx(0.125)
    # d = (0.5, 0.25, -0.25, 0.5), sum 1.0: of 16 patterns, sums >= 1.0 are all-plus (1.5) and
    # the two with one 0.25 flipped (1.0): 3/16, two-sided 6/16.
    assert stats.permutation_p_value([0.5, 0.5, 0.25, 1.0], [0, 0.25, 0.5, 0.5]) == pytest.approx(0.375)


def test_holm_matches_a_hand_computed_example() -> None:
    # sorted 0.01, 0.03, 0.04 -> 3*0.01 = 0.03, 2*0.03 = 0.06, max(0.06, 1*0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1, monotone
    assert holm([0.02]) == [0.02]
    assert holm([]) == []


def test_paired_table_with_holm_matches_hand_computation() -> None:
    # Seven users, hit@1 of three methods against a reference that never hits:
    #   m1 hits all 7: p = 2 * 1/128 = 0.015625; Holm 3 * 0.015625 = 0.046875 < 0.05 -> better
    #   m2 hits 6 (one zero difference): p = 2 * 2/128 = 0.03125; Holm 2 * 0.03125 = 0.0625 -> ≈
    #      (significant before the correction, not after it)
    #   m3 hits 1: p = 2 * 64/128 -> 1.0; Holm 1.0 -> ≈
    reference = rows([0.0] * 7, "hit@1")
    table = stats.compare_all(
        {
            "m1": (rows([1.0] * 7, "hit@1"), reference),
            "m2": (rows([1.0] * 6 + [0.0], "hit@1"), reference),
            "m3": (rows([1.0] + [0.0] * 6, "hit@1"), reference),
        },
        ["hit@1"],
    )
    m1, m2, m3 = (table[m]["hit@1"] for m in ("m1", "m2", "m3"))
    assert (m1.p_value, m2.p_value, m3.p_value) == pytest.approx((0.015625, 0.03125, 1.0))
    assert (m1.p_holm, m2.p_holm, m3.p_holm) == pytest.approx((0.046875, 0.0625, 1.0))
    assert (m1.verdict, m2.verdict, m3.verdict) == (stats.BETTER, stats.SAME, stats.SAME)
    assert m1.difference == 1.0 and m2.difference == pytest.approx(6 / 7) and m3.users == 7
    assert m1.as_dict()["marker"] == "▲" and m2.as_dict()["marker"] == "≈"


def test_a_worse_method_gets_the_down_marker() -> None:
    reference = rows([1.0] * 7)
    table = stats.compare_all(
        {"up": (rows([2.0] * 7), reference), "down": (rows([0.0] * 7), reference)}, ["m"]
    )
    assert table["up"]["m"].p_holm == pytest.approx(0.03125)  # 2 * 0.015625
    assert table["down"]["m"].verdict == stats.WORSE and table["down"]["m"].as_dict()["marker"] == "▼"
    assert table["down"]["m"].ci == [-1.0, -1.0]


def test_identical_methods_differ_by_exactly_zero() -> None:
    same = rows(NDCG5)
    result = stats.compare_all({"copy": (dict(same), same)}, ["m"])["copy"]["m"]
    assert result.difference == 0.0 and result.ci == [0.0, 0.0]
    assert result.p_value == 1.0 and result.p_holm == 1.0
    assert result.verdict == stats.SAME == "no detectable difference"


def test_a_single_pair_has_no_interval_and_p_one() -> None:
    result = stats.paired({"a": {"m": 1.0}, "b": {"m": 0.0}}, {"a": {"m": 0.0}}, "m")
    assert result.users == 1 and result.difference == 1.0
    assert result.ci is None and result.p_value == 1.0


def test_metric_order() -> None:
    recorded = ["avg_hr", "hit@1", "hit@10", "hit@3", "mrr", "ndcg@10", "ndcg@3"]  # json sort_keys order
    assert metric_order(recorded) == ["hit@1", "hit@3", "hit@10", "ndcg@3", "ndcg@10", "mrr", "avg_hr"]


def test_pairing_uses_only_common_users() -> None:
    method = {"a": {"m": 1.0}, "b": {"m": 1.0}, "c": {"m": 0.0}}
    reference = {"b": {"m": 0.0}, "c": {"m": 0.0}, "d": {"m": 1.0}}
    result = stats.paired(method, reference, "m")
    assert result.users == 2 and result.difference == 0.5


def test_reference_is_the_strongest_classic_baseline_by_ndcg5() -> None:
    means = {
        "arag": {"ndcg@5": 0.9},
        "popularity": {"ndcg@5": 0.64},
        "itemknn": {"ndcg@5": 0.71},
        "bpr": {"ndcg@5": 0.71},
    }
    kinds = {"arag": "llm", "popularity": "classic", "itemknn": "classic", "bpr": "classic"}
    name, how = stats.choose_reference(means, kinds)
    assert name == "itemknn"  # the LLM method is stronger but not classic; bpr ties, comes later
    assert "strongest classic baseline" in how
    assert stats.choose_reference(means, kinds, "arag") == ("arag", "chosen with --reference")
    assert stats.choose_reference({"arag": {"ndcg@5": 0.9}}, kinds)[0] is None
    with pytest.raises(ValueError, match="'nope' is not among the methods run"):
        stats.choose_reference(means, kinds, "nope")


def test_verdicts() -> None:
    assert stats.verdict(0.1, 0.01) == stats.BETTER
    assert stats.verdict(-0.1, 0.01) == stats.WORSE
    assert stats.verdict(0.1, 0.05) == stats.SAME  # not below alpha
    assert stats.MARKERS == {stats.BETTER: "▲", stats.WORSE: "▼", stats.SAME: "≈"}
