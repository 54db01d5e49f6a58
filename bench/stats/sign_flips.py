"""The paired sign-flip permutation test of a mean difference, and the interval that inverts it.

Under H0 "the mean per-user difference is δ" the two values of a user are exchangeable around δ, so
each centred difference d_i − δ keeps or flips its sign. The p-value is the share of sign patterns
whose |Σ s_i (d_i − δ)| is at least the observed |Σ (d_i − δ)|: every pattern when 2^n ≤ `resamples`
(exact), else `resamples` seeded random patterns plus the observed one. The patterns are drawn once,
so p(δ) costs one pass over them for any δ, and the interval at level α is the set of shifts δ the
same test does not reject: {δ : p(δ) ≥ α}. Its bounds are found by bisection from the mean (p = 1).

Given the verdict on δ = 0, the bisection starts from 0 on its side (as rejected or accepted), so an
interval excludes 0 exactly when the test rejects 0 at that level: interval and marker never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

TOLERANCE = 1e-9
"""Relative tolerance when comparing a pattern's statistic with the observed one (float sums)."""
BISECTIONS = 60
"""Bisection steps per interval bound (the bound is then within 2^-60 of the scale of the data)."""
DIGITS = 12
"""Decimals the bounds are rounded to (bisection and float sums leave noise in the last bits)."""
CHUNK_VALUES = 4_000_000
"""Sign values multiplied at once when summing patterns (bounds the memory of large runs)."""


@lru_cache(maxsize=2)
def sign_patterns(n: int, resamples: int, seed: int) -> tuple[np.ndarray, bool]:
    """The sign patterns (rows of ±1, int8) for `n` users, and whether they are every pattern (exact,
    2^n ≤ `resamples`) or `resamples` seeded random ones. Cached: the methods of a run share users."""
    if n < 63 and 2**n <= resamples:
        codes = np.arange(2**n, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)
        return ((codes & 1) * 2 - 1).astype(np.int8), True
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 2, size=(resamples, n), dtype=np.int8) * 2 - 1).astype(np.int8), False


@lru_cache(maxsize=2)
def _float_patterns(n: int, resamples: int, seed: int) -> np.ndarray | None:
    """`sign_patterns` as float64, kept when small enough (≤ `CHUNK_VALUES` values): every comparison
    of a run multiplies the same patterns, and converting them each time cost more than the product."""
    patterns, _ = sign_patterns(n, resamples, seed)
    return patterns.astype(np.float64) if patterns.size <= CHUNK_VALUES else None


@dataclass(frozen=True)
class SignFlips:
    """The sign-flip test of one set of paired differences, at any shift."""

    differences: np.ndarray
    """The per-user differences (method − reference)."""
    sums: np.ndarray
    """Σ s_i d_i of every sign pattern s."""
    counts: np.ndarray
    """Σ s_i of every sign pattern (so a shift δ gives Σ s_i (d_i − δ) = sums − δ·counts)."""
    exact: bool
    """True when the patterns are all 2^n of them (the p-value is then exact)."""

    @classmethod
    def of(cls, differences: np.ndarray | list[float], resamples: int, seed: int) -> SignFlips:
        """The test of `differences` with `resamples` random patterns seeded with `seed` (or every
        pattern when 2^n ≤ `resamples`)."""
        d = np.asarray(differences, dtype=float).reshape(-1)
        if d.size < 2:
            return cls(d, np.zeros(0), np.zeros(0), True)
        patterns, exact = sign_patterns(d.size, resamples, seed)
        converted = _float_patterns(d.size, resamples, seed)
        rows = max(1, CHUNK_VALUES // d.size)
        sums = (
            converted @ d
            if converted is not None
            else np.concatenate(
                [patterns[i : i + rows].astype(np.float64) @ d for i in range(0, len(patterns), rows)]
            )
        )
        return cls(d, sums, patterns.sum(axis=1, dtype=np.int64).astype(np.float64), exact)

    def p_value(self, shift: float = 0.0) -> float:
        """Two-sided p-value of "the mean difference is `shift`" (1.0 for fewer than 2 users: a single
        pair's two flips, +d and −d, are both as extreme)."""
        if self.differences.size < 2:
            return 1.0
        centred = self.differences - shift
        observed = abs(float(centred.sum()))
        tolerance = TOLERANCE * float(np.abs(centred).sum())
        extreme = int(np.count_nonzero(np.abs(self.sums - shift * self.counts) >= observed - tolerance))
        if self.exact:
            return min(1.0, extreme / len(self.sums))
        return min(1.0, (extreme + 1) / (len(self.sums) + 1))

    def interval(self, alpha: float, zero_rejected: bool | None = None) -> list[float] | None:
        """[low, high]: the shifts this test does not reject at level `alpha` (p ≥ alpha). None for
        fewer than 2 users and when no shift is rejected (too few users for this level).

        `zero_rejected` is the verdict on 0 (default: this test's p(0) < alpha); the bisection takes it
        as given, so the interval excludes 0 exactly when it is True."""
        d = self.differences
        if d.size < 2:
            return None
        low_far, high_far = float(d.min()) - 1.0, float(d.max()) + 1.0
        if self.p_value(low_far) >= alpha:  # beyond the data every pattern test is as extreme as it gets
            return None
        if zero_rejected is None:
            zero_rejected = self.p_value(0.0) < alpha
        mean = float(d.mean())
        bounds = [
            self._bound(mean, low_far, alpha, zero_rejected),
            self._bound(mean, high_far, alpha, zero_rejected),
        ]
        snapped = [round(bound, DIGITS) + 0.0 for bound in bounds]  # + 0.0: never -0.0
        if zero_rejected and snapped[0] <= 0.0 <= snapped[1]:  # rounding must not reach 0
            return bounds
        return snapped

    def _bound(self, inside: float, outside: float, alpha: float, zero_rejected: bool) -> float:
        """The accepted shift nearest the rejected one on the segment from `inside` (the mean,
        accepted) to `outside` (rejected), 0 counted as the verdict says when it lies between."""
        if inside != 0.0 and min(inside, outside) <= 0.0 <= max(inside, outside):
            if zero_rejected:
                outside = 0.0
            else:
                inside = 0.0
        for _ in range(BISECTIONS):
            middle = (inside + outside) / 2
            if middle in (inside, outside):
                break
            if self.p_value(middle) >= alpha:
                inside = middle
            else:
                outside = middle
        return inside
