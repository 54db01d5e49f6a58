"""Small deterministic summaries the tool agents' fallbacks share: category distributions, anchor
items, eras, rating thresholds, rank normalisation."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from statistics import median
from typing import Any

import numpy as np
from scipy.stats import rankdata

from world.environment import Environment

LOW_RATING_SHARE = 0.4
"""A rating at most this share of the dataset's top rating is a dislike (2 of 5)."""
HIGH_RATING_SHARE = 0.8
"""A rating at least this share of the top rating is a like (4 of 5)."""


Row = Mapping[str, Any]
"""An item as an environment tool returned it (a `get_user` interaction or a `get_item` record)."""


def year_of(row: Row) -> str | None:
    """The row's year (top level for history rows, in `attributes` for item records)."""
    return row.get("year") or (row.get("attributes") or {}).get("year")


def category_shares(rows: Sequence[Row]) -> list[tuple[str, float]]:
    """Each category's share of the rows' category mentions, largest first (ties by name)."""
    counts: Counter[str] = Counter()
    for row in rows:
        counts.update(row.get("categories") or ())
    total = sum(counts.values())
    if not total:
        return []
    return sorted(((c, n / total) for c, n in counts.items()), key=lambda pair: (-pair[1], pair[0]))


def format_shares(shares: Sequence[tuple[str, float]], top: int = 5) -> str:
    """`Drama 31%, Comedy 22%` for the `top` largest shares."""
    return ", ".join(f"{name} {share:.0%}" for name, share in shares[:top])


def title_list(rows: Sequence[Row], top: int = 5) -> str:
    """`Fargo (1996); Star Wars (1977)` for the first `top` rows."""
    parts = []
    for row in rows[:top]:
        year = year_of(row)
        parts.append(f"{row['title']} ({year})" if year else str(row["title"]))
    return "; ".join(parts)


def central_rows(env: Environment, rows: Sequence[Row], top: int = 5) -> list[Row]:
    """The distinct rows whose items are closest (MiniLM cosine) to the rows' mean embedding."""
    distinct = list({row["item_id"]: row for row in rows}.values())
    if not distinct:
        return []
    vectors = env.item_vectors()[[env.item_index[row["item_id"]] for row in distinct]]
    order = np.argsort(-(vectors @ vectors.mean(axis=0)), kind="stable")
    return [distinct[i] for i in order[:top]]


def recency_profile(
    env: Environment, newest_first: Sequence[str], half_life: float = 10.0
) -> np.ndarray | None:
    """Unit-length mean embedding of items given newest first, weight halving every `half_life` items."""
    if not newest_first:
        return None
    vectors = env.item_vectors()[[env.item_index[i] for i in newest_first]]
    weights = 0.5 ** (np.arange(len(newest_first)) / half_life)
    mean = weights @ vectors
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else None


def era(rows: Sequence[Row]) -> str | None:
    """`1990s (median 1994)` from the rows' years, or None without years."""
    years = [int(y[:4]) for row in rows if (y := year_of(row)) and y[:4].isdigit()]
    if not years:
        return None
    middle = int(median(years))
    return f"{middle // 10 * 10}s (median {middle})"


def rating_thresholds(top: float) -> tuple[float, float]:
    """(dislike at or below, like at or above) for a dataset whose highest rating is `top`."""
    return LOW_RATING_SHARE * top, HIGH_RATING_SHARE * top


def percentile_ranks(values: Sequence[float]) -> np.ndarray:
    """Values mapped to [0, 1] by rank (ties share their mean rank; one value -> 0.5): scipy's
    `rankdata(method="average")`, bit for bit, computed in numpy because scipy's per-call overhead
    was most of the fusion's time (it runs for every tool of every ranking a trajectory tries)."""
    array = np.asarray(values, dtype=np.float64)
    if array.size <= 1:
        return np.full(array.size, 0.5)
    if np.isnan(array).any():  # scipy's rule for NaN (every rank NaN) stays scipy's
        return (rankdata(array, method="average") - 1.0) / (array.size - 1.0)
    order = np.argsort(array, kind="mergesort")
    ordered = array[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], array.size]
    ranks = np.empty(array.size)
    ranks[order] = np.repeat((starts + ends - 1) / 2.0, ends - starts)  # mean 0-based rank of a tie
    return ranks / (array.size - 1.0)


def clip01(value: float) -> float:
    """`value` clipped into [0, 1]."""
    return float(min(max(value, 0.0), 1.0))
