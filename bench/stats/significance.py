"""Honest comparisons: bootstrap intervals over users, paired tests, Holm, markers.

Pure functions: per-user metric values in, numbers out (no files, no registry).

- Interval of a method's metric: 95% percentile bootstrap over users
  (the resamples `scipy.stats.bootstrap` draws with `method="percentile"`, `BOOTSTRAP_RESAMPLES`
  of them, seeded with `SEED`, counted per user so a table's means are one exact matrix product).
  Users are sorted by id first, so the interval does not depend on the order
  in which users finished (`--concurrency`).
- Paired comparison of a method with a reference on the users both were run on: the mean
  per-user difference (method − reference) and the p-value of a two-sided paired permutation
  test (`bench.stats.sign_flips`: under H0 the two values of a user are exchangeable, so each
  per-user difference keeps or flips its sign; exact when 2^n ≤ `PERMUTATION_RESAMPLES`,
  else `PERMUTATION_RESAMPLES` seeded random sign flips).

  Why a permutation test and not Wilcoxon: it tests the statistic we report (the mean
  difference) while Wilcoxon tests a shift of the pseudo-median; our per-user metrics are
  heavily tied and zero-inflated (hit@1 differences are -1, 0 or +1; most users rank the
  target the same under two methods), where Wilcoxon needs a zero/tie convention and a
  normal approximation, whereas sign flips handle zeros (they flip to themselves) and ties
  exactly, with no distributional assumption.
- Holm's step-down correction across the methods compared with one reference, per metric.
- Verdict: "better" (▲) / "worse" (▼) when the Holm-adjusted p < `ALPHA`, by the sign of
  the difference; otherwise "no detectable difference" (≈).
- The difference's interval is at the level the verdict used: the shifts the same sign-flip
  test does not reject at the significance level Holm held that comparison to (`holm_levels`:
  α/(m − i) for the i-th smallest p while Holm rejects, the level it stopped at after), so
  an interval excludes 0 exactly when its marker is ▲ or ▼. With one compared method it is a
  95% interval; with m, up to 1 − α/m.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from bench.stats.holm import ALPHA, holm, holm_levels
from bench.stats.sign_flips import SignFlips

CONFIDENCE = 0.95
"""Confidence level of every interval."""
BOOTSTRAP_RESAMPLES = 9999
"""Bootstrap resamples per interval (scipy's default)."""
PERMUTATION_RESAMPLES = 9999
"""Random sign-flip patterns per permutation test when the exact test (2^n) is larger."""
SEED = 0
"""Seed of every resampling, fixed so that reports are reproducible."""
COMPARED = ("hit@1", "ndcg@5", "mrr", "avg_hr")
"""Metrics `recgraph bench` tests against the reference (one test costs ~0.3 s at 300 users)."""
BETTER, WORSE, SAME = "better", "worse", "no detectable difference"
MARKERS = {BETTER: "▲", WORSE: "▼", SAME: "≈"}
"""Verdict -> marker in tables."""

Rows = Mapping[str, Mapping[str, float]]
"""Per-user metrics of one method: user id -> {metric: value}."""


def settings() -> dict[str, Any]:
    """The resampling settings, as written to metrics.json."""
    return {
        "interval": f"{CONFIDENCE:.0%} percentile bootstrap over users (the draws of scipy.stats.bootstrap)",
        "confidence": CONFIDENCE,
        "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
        "test": "two-sided paired permutation test of the mean difference (per-user sign flips, "
        "bench.stats.sign_flips; exact when 2^users <= resamples)",
        "permutation_resamples": PERMUTATION_RESAMPLES,
        "compared_metrics": list(COMPARED),
        "correction": "Holm across the compared methods, per metric",
        "difference_interval": "the shifts of the mean difference the same sign-flip test does not reject "
        "at the level Holm held the comparison to (ci_level = 1 - that level): it excludes 0 exactly "
        "when the marker is better or worse",
        "alpha": ALPHA,
        "seed": SEED,
    }


EXACT_SCALE = 2.0**40
"""Values are rounded to multiples of 1/EXACT_SCALE (< 1e-12 apart) before they are summed: resampled
sums of at most a few thousand such values are then exact in float64, whatever order BLAS adds them in."""


@lru_cache(maxsize=4)
def _resample_counts(users: int, resamples: int, seed: int) -> np.ndarray:
    """How often each user is drawn in each bootstrap resample, (users, resamples) as float64.

    The draws are scipy.stats.bootstrap's own (one `integers(0, n, (resamples, n))` from a
    `default_rng(seed)`); counting them turns the resampled means of a whole table into one matrix
    product instead of a (rows, resamples, users) copy."""
    draws = np.random.default_rng(seed).integers(0, users, (resamples, users))
    flat = (draws + (np.arange(resamples) * users)[:, None]).ravel()
    counts = np.bincount(flat, minlength=resamples * users).reshape(resamples, users)
    return np.ascontiguousarray(counts.T, dtype=np.float64)


def bootstrap_cis(
    table: Sequence[Sequence[float]], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = SEED
) -> list[list[float] | None]:
    """95% percentile bootstrap interval [low, high] of the mean of each row of `table`.

    Rows are equally long (one value per user); the users are resampled once for all rows, and the
    sums are exact (`EXACT_SCALE`), so a row's interval is the same, to the last bit, as when it is
    bootstrapped alone with the same seed. None for fewer than 2 users (no spread to resample);
    exactly [v, v] for a row whose values are all v.
    """
    data = np.asarray(table, dtype=float).reshape(len(table), -1)
    users = data.shape[1]
    if users < 2:
        return [None] * data.shape[0]
    sums = np.round(data * EXACT_SCALE) @ _resample_counts(users, resamples, seed)
    tail = (1.0 - CONFIDENCE) / 2
    low, high = np.quantile(sums / (users * EXACT_SCALE), [tail, 1.0 - tail], axis=-1)
    constant = np.all(data == data[:, :1], axis=1)
    return [
        [float(row[0]), float(row[0])] if same else [float(lo), float(hi)]
        for row, same, lo, hi in zip(data, constant, low, high, strict=True)
    ]


def bootstrap_ci(
    values: Sequence[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = SEED
) -> list[float] | None:
    """95% percentile bootstrap interval [low, high] of the mean of `values` (see `bootstrap_cis`)."""
    return bootstrap_cis([values], resamples, seed)[0]


def metric_intervals(rows: Rows) -> dict[str, list[float] | None]:
    """Bootstrap interval of every metric's mean over the users in `rows` (sorted by id)."""
    users = sorted(rows)
    if not users:
        return {}
    metrics = list(rows[users[0]])
    intervals = bootstrap_cis([[rows[u][m] for u in users] for m in metrics])
    return dict(zip(metrics, intervals, strict=True))


def with_intervals(summary: Mapping[str, Any], intervals: Mapping[str, Any]) -> dict[str, Any]:
    """`summary` with `<metric>_ci` inserted right after each `<metric>` it has an interval for."""
    merged: dict[str, Any] = {}
    for key, value in summary.items():
        if key.endswith("_ci"):
            continue
        merged[key] = value
        if key in intervals:
            merged[f"{key}_ci"] = intervals[key]
    return merged


def permutation_p_value(
    x: Sequence[float], y: Sequence[float], resamples: int = PERMUTATION_RESAMPLES, seed: int = SEED
) -> float:
    """Two-sided paired permutation p-value of mean(x − y) = 0 (pairs are x[i], y[i]).

    1.0 when x == y (every sign flip gives the observed 0) and for a single pair (its two
    flips, +d and −d, are both as extreme as the observed one).
    """
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.array_equal(a, b) or a.size < 2:  # all flips give 0, as observed / only ±d: both as extreme
        return 1.0
    return SignFlips.of(a - b, resamples, seed).p_value()


def verdict(difference: float, p_adjusted: float, alpha: float = ALPHA) -> str:
    """better / worse when the adjusted p-value is below `alpha`, else no detectable difference."""
    if p_adjusted < alpha and difference > 0:
        return BETTER
    if p_adjusted < alpha and difference < 0:
        return WORSE
    return SAME


@dataclass
class Paired:
    """One method against its reference on one metric."""

    difference: float
    """mean over paired users of (method − reference)."""
    ci: list[float] | None
    """Interval of `difference` at `ci_level`: the shifts the sign-flip test does not reject (None
    for fewer than 2 users, or too few users to reject any shift at that level)."""
    p_value: float
    """Two-sided paired permutation p-value (uncorrected)."""
    users: int
    """Users paired."""
    p_holm: float = 1.0
    """Holm-adjusted p-value across the methods compared with the same reference."""
    verdict: str = SAME
    """better / worse / no detectable difference."""
    ci_level: float = CONFIDENCE
    """Confidence level of `ci`: 1 − the level Holm held this comparison to (`holm_levels`)."""
    flips: SignFlips | None = field(default=None, repr=False, compare=False)
    """The test behind `p_value` and `ci` (not stored in metrics.json)."""

    def as_dict(self) -> dict[str, Any]:
        """The metrics.json form."""
        return {
            "difference": self.difference,
            "ci": self.ci,
            "ci_level": self.ci_level,
            "p_value": self.p_value,
            "p_holm": self.p_holm,
            "verdict": self.verdict,
            "marker": MARKERS[self.verdict],
            "users": self.users,
        }


def paired(method: Rows, reference: Rows, metric: str, interval: bool = True) -> Paired:
    """Compare `method` with `reference` on `metric` over the users both have (sorted by id); the
    difference's interval at 95% unless `interval` is False (`compare_all` sets it at Holm's level)."""
    users = sorted(set(method) & set(reference))
    x = [method[u][metric] for u in users]
    y = [reference[u][metric] for u in users]
    differences = [a - b for a, b in zip(x, y, strict=True)]
    mean = math.fsum(differences) / len(differences) if differences else 0.0
    flips = SignFlips.of(differences, PERMUTATION_RESAMPLES, SEED)
    p_value = 1.0 if all(d == 0.0 for d in differences) else flips.p_value()
    result = Paired(mean, None, p_value, len(users), flips=flips)
    if interval:
        result.ci = flips.interval(1.0 - CONFIDENCE, zero_rejected=p_value < 1.0 - CONFIDENCE)
    return result


def compare_all(
    pairs: Mapping[str, tuple[Rows, Rows]], metrics: Sequence[str]
) -> dict[str, dict[str, Paired]]:
    """name -> metric -> `Paired` for each (method rows, reference rows); Holm across names per metric,
    each interval at the level Holm held its comparison to (so it agrees with the marker)."""
    table = {
        name: {m: paired(rows, ref, m, interval=False) for m in metrics}
        for name, (rows, ref) in pairs.items()
    }
    for metric in metrics:
        names = list(table)
        p_values = [table[n][metric].p_value for n in names]
        for name, adjusted, level in zip(names, holm(p_values), holm_levels(p_values), strict=True):
            row = table[name][metric]
            row.p_holm = adjusted
            row.verdict = verdict(row.difference, adjusted)
            row.ci_level = 1.0 - level
            if row.flips is not None:
                row.ci = row.flips.interval(level, zero_rejected=row.verdict != SAME)
    return table


def choose_reference(
    means: Mapping[str, Mapping[str, float]], kinds: Mapping[str, str], requested: str | None = None
) -> tuple[str | None, str]:
    """The reference method and how it was chosen.

    `requested` if given (ValueError unless it is one of `means`); else the classic method
    (`kinds[m] == "classic"`) with the highest ndcg@5, the first in run order on ties; None
    when the run has no classic method.
    """
    if requested:
        if requested not in means:
            raise ValueError(f"reference {requested!r} is not among the methods run: {', '.join(means)}")
        return requested, "chosen with --reference"
    classic = [m for m in means if kinds.get(m) == "classic"]
    if not classic:
        return None, "no classic baseline in the run and no --reference"
    best = max(classic, key=lambda m: (means[m].get("ndcg@5", 0.0), -classic.index(m)))
    return best, "the strongest classic baseline in the run by ndcg@5 (default; change with --reference)"
