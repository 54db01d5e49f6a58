"""Eq. 6-7 of AMEM4Rec: the similarity validator's memory-management policy, as a pure function.

Given the cosine scores S of the new memory's top-|L| neighbours (k = |S|, which is |L| once the
pool holds at least |L| memories), with s_max = max S and the shares
    p_high = |{s >= tau_high}| / k,  p_medium = |{tau_low <= s < tau_high}| / k,  p_low = |{s < tau_low}| / k,
the policy pi is, row by row (the first row that holds wins):
    1. s_max < tau_low                       -> STORE only
    2. tau_low <= s_max < tau_high           -> UPDATE and STORE
    3. s_max >= tau_high and p_high >= 0.6   -> UPDATE only
    4. s_max >= tau_high and p_low >= 0.5    -> STORE only
    5. otherwise                             -> UPDATE and STORE
An empty pool has no s_max: row 1 (store). The share thresholds 0.6 / 0.5 are `Context.amem4rec_p_high`
/ `amem4rec_p_low`; shares are compared with a 1e-9 tolerance so 3/5 counts as 0.6.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Action = Literal["store_only", "update_and_store", "update_only"]
"""The three memory-management strategies (and the graph's three branch nodes)."""
ACTIONS: tuple[Action, ...] = ("store_only", "update_and_store", "update_only")
SKIPPED = "skipped"
"""A window's outcome when its extraction call failed under a model backend: nothing stored or evolved."""
OUTCOMES = (*ACTIONS, SKIPPED)
"""What a training window's ledger row can record: one of Eq. 7's strategies, or skipped."""
EPSILON = 1e-9


@dataclass(frozen=True)
class PolicyDecision:
    """What Eq. 7 decided and why."""

    action: Action
    """The strategy."""
    row: int
    """Which row of Eq. 7 decided it (1-5)."""
    s_max: float | None
    """Largest score (None for an empty pool)."""
    p_high: float
    """Share of scores >= tau_high."""
    p_medium: float
    """Share of scores in [tau_low, tau_high)."""
    p_low: float
    """Share of scores < tau_low."""
    k: int
    """How many scores there were."""

    @property
    def update(self) -> bool:
        """doUpdate of Algorithm 1."""
        return self.action != "store_only"

    @property
    def store(self) -> bool:
        """doStore of Algorithm 1."""
        return self.action != "update_only"

    def explain(self, tau_low: float, tau_high: float) -> str:
        """One line for the blackboard."""
        if self.s_max is None:
            return "row 1: the pool is empty -> store only"
        shares = (
            f"p_high {self.p_high:.2f}, p_medium {self.p_medium:.2f}, p_low {self.p_low:.2f} of k={self.k}"
        )
        why = {
            1: f"s_max {self.s_max:.3f} < tau_low {tau_low}",
            2: f"tau_low {tau_low} <= s_max {self.s_max:.3f} < tau_high {tau_high}",
            3: f"s_max {self.s_max:.3f} >= tau_high {tau_high} and p_high >= threshold",
            4: f"s_max {self.s_max:.3f} >= tau_high {tau_high} and p_low >= threshold",
            5: f"s_max {self.s_max:.3f} >= tau_high {tau_high}, neither share decisive",
        }[self.row]
        return f"row {self.row}: {why} ({shares}) -> {self.action.replace('_', ' ')}"


def memory_policy(
    scores: Sequence[float], tau_low: float, tau_high: float, p_high_min: float = 0.6, p_low_min: float = 0.5
) -> PolicyDecision:
    """Eq. 7 over the neighbours' cosine scores (see the module docstring)."""
    if not tau_low < tau_high:
        raise ValueError(f"tau_low ({tau_low}) must be below tau_high ({tau_high})")
    k = len(scores)
    if not k:
        return PolicyDecision("store_only", 1, None, 0.0, 0.0, 0.0, 0)
    s_max = max(scores)
    p_high = sum(s >= tau_high for s in scores) / k
    p_low = sum(s < tau_low for s in scores) / k
    p_medium = sum(tau_low <= s < tau_high for s in scores) / k
    if s_max < tau_low:
        action, row = "store_only", 1
    elif s_max < tau_high:
        action, row = "update_and_store", 2
    elif p_high >= p_high_min - EPSILON:
        action, row = "update_only", 3
    elif p_low >= p_low_min - EPSILON:
        action, row = "store_only", 4
    else:
        action, row = "update_and_store", 5
    return PolicyDecision(action, row, s_max, p_high, p_medium, p_low, k)
