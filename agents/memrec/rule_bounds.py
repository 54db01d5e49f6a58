"""Bounds on a rule set's scores when some features are only known to lie in an interval.

`score_bounds` is `agents.memrec.rule_scoring.score_neighbours` in interval arithmetic: each feature is a
range [low, high] per neighbour (equal ends: a known value), and every neighbour gets a range its
score is sure to lie in, whatever the unknown features turn out to be inside theirs. An effect whose
conditions may or may not hold contributes the hull of its factor (or addend) and the neutral 1 (or
0). Curation uses it to compute the expensive memory_similarity_score (a MiniLM embedding of the
neighbour's memory) only for the neighbours that can still reach the top k
(agents/memrec/curation.py); the ranges are widened by `SLACK` so that rounding never puts a
computed score outside its own range.
"""

from __future__ import annotations

import numpy as np

from agents.memrec.rules import FEATURES, Effect, RuleSet

SLACK = 1e-9
"""Relative widening of every score range (far above float64 rounding of a few dozen operations)."""

Interval = tuple[np.ndarray, np.ndarray]
"""(low, high) arrays of the same length."""
_COL = {name: i for i, name in enumerate(FEATURES)}


def _times(a: Interval, b: Interval) -> Interval:
    """The product of two intervals (elementwise)."""
    products = np.stack([a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]])
    return products.min(axis=0), products.max(axis=0)


def _hull(a: Interval, value: float) -> Interval:
    """The smallest interval holding `a` and `value`."""
    return np.minimum(a[0], value), np.maximum(a[1], value)


def _holds(op: np.ufunc, low: np.ndarray, high: np.ndarray, threshold: float) -> Interval:
    """(surely, possibly): whether `x op threshold` holds for every / for some x in [low, high]."""
    if op is np.less:
        return high < threshold, low < threshold
    if op is np.less_equal:
        return high <= threshold, low <= threshold
    if op is np.greater:
        return low > threshold, high > threshold
    if op is np.greater_equal:
        return low >= threshold, high >= threshold
    point = (low == threshold) & (high == threshold)
    inside = (low <= threshold) & (threshold <= high)
    if op is np.equal:
        return point, inside
    return (high < threshold) | (low > threshold), ~point  # not_equal


def _effect_value(effect: Effect, rate: float, boost: bool, cols: Interval) -> Interval:
    """The range of one effect's factor (or addend) over the feature ranges."""
    low, high = cols
    if effect.type == "decay":
        col = _COL[str(effect.feature)]
        return np.exp(-rate * high[col]), np.exp(-rate * low[col])
    value = float(effect.value or 0.0)
    if effect.feature is not None:
        col = _COL[effect.feature]
        ends = np.stack([value + effect.coef * low[col], value + effect.coef * high[col]])
        first, last = ends.min(axis=0), ends.max(axis=0)
        return (first, last) if boost else (np.maximum(first, 0.0), np.maximum(last, 0.0))
    value = value if boost else max(value, 0.0)
    return np.full(low.shape[1], value), np.full(low.shape[1], value)


def score_bounds(
    rule_set: RuleSet, low: np.ndarray, high: np.ndarray, is_item: np.ndarray, base: float = 1.0
) -> Interval:
    """Per neighbour, a range holding `score_neighbours(rule_set, x, is_item, base)` for every
    feature matrix x with low <= x <= high (n x 5, `FEATURES` columns)."""
    if low.shape != high.shape or low.ndim != 2 or low.shape[1] != len(FEATURES):
        raise ValueError(f"low and high must both be n x {len(FEATURES)}, got {low.shape} and {high.shape}")
    cols = (np.ascontiguousarray(low.T, dtype=np.float64), np.ascontiguousarray(high.T, dtype=np.float64))
    n = low.shape[0]
    kinds = {"item": is_item, "user": ~is_item, "any": np.ones(n, dtype=bool)}
    ones, zeros = np.ones(n), np.zeros(n)
    terms = [(ones.copy(), ones.copy()) for _ in rule_set.base_terms]
    factor, boost = (ones.copy(), ones.copy()), (zeros.copy(), zeros.copy())
    for conds, kind, effect, rate, dest in rule_set.program:
        surely, possibly = kinds[kind].copy(), kinds[kind].copy()
        for op, col, threshold in conds:
            sure, maybe = _holds(op, cols[0][col], cols[1][col], threshold)
            surely &= sure
            possibly &= maybe
        if not possibly.any():
            continue
        value = _effect_value(effect, rate, dest == -2, cols)
        neutral = 0.0 if dest == -2 else 1.0
        unsure = _hull(value, neutral)
        value = (np.where(surely, value[0], unsure[0]), np.where(surely, value[1], unsure[1]))
        value = (np.where(possibly, value[0], neutral), np.where(possibly, value[1], neutral))
        if dest == -2:
            boost = (boost[0] + value[0], boost[1] + value[1])
        elif dest == -1:
            factor = _times(factor, value)
        else:
            terms[dest] = _times(terms[dest], value)
    total = (np.full(n, float(base)), np.full(n, float(base)))
    for j, term in enumerate(rule_set.base_terms):
        col = _COL[term.feature]
        x = (cols[0][col], cols[1][col])
        if term.transform == "log1p":
            x = (np.log1p(x[0]), np.log1p(x[1]))
        part = _times((np.full(n, term.weight), np.full(n, term.weight)), _times(terms[j], x))
        total = (total[0] + part[0], total[1] + part[1])
    score = _times(total, factor)
    score = (score[0] + boost[0], score[1] + boost[1])
    width = SLACK * (1.0 + np.maximum(np.abs(score[0]), np.abs(score[1])))
    return score[0] - width, score[1] + width
