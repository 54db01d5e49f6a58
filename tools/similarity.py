"""Embedding look-ups agents and planners call: a user's profile vector, items ordered by
similarity to it, and a stable ordering by scores.

Contract: every vector is a MiniLM embedding of an item's text (`Environment.item_vectors()`,
L2-normalised), so a dot product is a cosine; orders are deterministic (ties keep input order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from world.environment import Environment


def rank_by_scores(items: Sequence[str], scores: np.ndarray) -> list[str]:
    """Items by descending score; ties keep the given order (a stable sort)."""
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    return [items[i] for i in order]


def profile_vector(env: Environment, items: Sequence[str]) -> np.ndarray | None:
    """Normalised mean MiniLM embedding of `items` (None for no items)."""
    if not items:
        return None
    vectors = env.item_vectors()[[env.item_index[i] for i in items]]
    mean = vectors.mean(axis=0)
    return mean / (np.linalg.norm(mean) or 1.0)


def similarity_scores(env: Environment, profile_items: Sequence[str], items: Sequence[str]) -> np.ndarray:
    """Each of `items`' cosine to the mean of `profile_items`; training popularity when that is empty."""
    profile = profile_vector(env, profile_items)
    if profile is None:
        return np.array([env.popularity.get(i, 0) for i in items], dtype=np.float64)
    return env.item_vectors()[[env.item_index[i] for i in items]] @ profile


def similarity_order(env: Environment, profile_items: Sequence[str], items: Sequence[str]) -> list[str]:
    """`items` by cosine to the mean of `profile_items`; by popularity when that is empty."""
    return rank_by_scores(items, similarity_scores(env, profile_items, items))
