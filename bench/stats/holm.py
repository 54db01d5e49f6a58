"""Holm's step-down correction across the methods compared with one reference: the adjusted
p-values (`holm`) and the level each comparison was held to (`holm_levels`, the level of its
difference's interval in bench/stats/significance.py)."""

from __future__ import annotations

from collections.abc import Sequence

ALPHA = 0.05
"""Family-wise error rate of the Holm-corrected verdicts."""


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given.

    Sorted ascending, the i-th smallest (1-based) is multiplied by m − i + 1, capped at 1,
    and made non-decreasing (each adjusted value is at least the previous one).
    """
    m = len(p_values)
    adjusted = [0.0] * m
    running = 0.0
    for position, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - position) * p_values[index]))
        adjusted[index] = running
    return adjusted


def holm_levels(p_values: Sequence[float], alpha: float = ALPHA) -> list[float]:
    """The significance level Holm's procedure held each p-value to, in the order given.

    Sorted ascending, the i-th smallest (0-based) is tested at alpha / (m − i) while every smaller
    one was rejected; from the first that is not rejected on, all are held to that step's level
    (which they do not reach: their p-values are at least the one that stopped the procedure).
    Rejected ("adjusted p < alpha") is decided by `holm`, so levels and verdicts always agree.
    """
    m = len(p_values)
    adjusted = holm(p_values)
    levels = [0.0] * m
    stop: int | None = None
    for position, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        if stop is None and not adjusted[index] < alpha:
            stop = position
        levels[index] = alpha / (m - (position if stop is None else stop))
    return levels
