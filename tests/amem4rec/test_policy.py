"""Eq. 7, row by row, at and around each threshold (tau_low=0.55, tau_high=0.9, p 0.6 / 0.5)."""

import pytest

from agents.amem4rec.policy import memory_policy

LOW, HIGH = 0.55, 0.9
JUST = 1e-6

CASES = [
    # (scores, action, row)
    ([], "store_only", 1),
    ([0.1], "store_only", 1),
    ([LOW - JUST, 0.2, 0.1, 0.0, -0.3], "store_only", 1),
    ([LOW, 0.2, 0.1, 0.0, -0.3], "update_and_store", 2),
    ([LOW + JUST, 0.5, 0.4, 0.3, 0.2], "update_and_store", 2),
    ([HIGH - JUST, HIGH - JUST, HIGH - JUST, HIGH - JUST, HIGH - JUST], "update_and_store", 2),
    # s_max >= tau_high with p_high at 0.6 (3 of 5): row 3, whatever the rest.
    ([HIGH, HIGH, HIGH, 0.1, 0.0], "update_only", 3),
    ([0.99, 0.95, HIGH, HIGH - JUST, 0.6], "update_only", 3),
    ([1.0, 1.0, 1.0, 1.0, 1.0], "update_only", 3),
    # p_high just below 0.6 (2 of 5) and p_low at 0.6 (3 of 5): row 4.
    ([0.99, HIGH, HIGH - JUST, LOW - JUST, 0.0], "update_and_store", 5),
    ([0.99, HIGH, LOW - JUST, 0.3, 0.0], "store_only", 4),
    ([HIGH, LOW - JUST, LOW - JUST, LOW - JUST, LOW - JUST], "store_only", 4),
    # p_low exactly 0.5 needs an even k: 2 of 4 below tau_low -> row 4; 1 of 4 -> row 5.
    ([0.95, 0.7, LOW - JUST, 0.1], "store_only", 4),
    ([0.95, 0.7, LOW, 0.1], "update_and_store", 5),
    # Neither share decisive: row 5 ("otherwise").
    ([HIGH, LOW, LOW, LOW, LOW], "update_and_store", 5),
    ([HIGH, HIGH, 0.7, 0.6, 0.1], "update_and_store", 5),
    # A pool smaller than |L|: the shares are over the memories compared (k = 1, 2).
    ([HIGH], "update_only", 3),
    ([HIGH + JUST, 0.2], "store_only", 4),
    ([HIGH - JUST], "update_and_store", 2),
]


@pytest.mark.parametrize(("scores", "action", "row"), CASES)
def test_every_row_of_eq_7_at_and_around_its_thresholds(scores: list[float], action: str, row: int) -> None:
    decision = memory_policy(scores, LOW, HIGH)
    assert (decision.action, decision.row) == (action, row)
    assert decision.update == (action != "store_only") and decision.store == (action != "update_only")


def test_shares_and_s_max_are_eq_6() -> None:
    decision = memory_policy([0.95, 0.9, 0.7, 0.55, 0.2], LOW, HIGH)
    assert decision.s_max == 0.95 and decision.k == 5
    assert (decision.p_high, decision.p_medium, decision.p_low) == (0.4, 0.4, 0.2)
    assert "row 5" in decision.explain(LOW, HIGH)


def test_share_thresholds_are_knobs() -> None:
    scores = [0.95, 0.92, 0.7, 0.6, 0.1]  # p_high 0.4, p_low 0.2
    assert memory_policy(scores, LOW, HIGH).action == "update_and_store"
    assert memory_policy(scores, LOW, HIGH, p_high_min=0.4).action == "update_only"
    assert memory_policy(scores, LOW, HIGH, p_high_min=0.5, p_low_min=0.2).action == "store_only"


def test_thresholds_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="tau_low"):
        memory_policy([0.5], 0.9, 0.55)
