"""Domain statistics LM_Mem reads before writing a domain's curation rules, including how recency_days
is measured on this dataset and which features it cannot feed (so no rule leans on a constant)."""

from __future__ import annotations

from statistics import median
from typing import TYPE_CHECKING, Any

import numpy as np

from agents.memrec.features import CURATION_NEEDS
from agents.memrec.order_clock import ORDER_HORIZON_DAYS, environment_pace, position_words
from world.shape import FIELDS, environment_fields

if TYPE_CHECKING:
    from world.environment import Environment


def domain_statistics(env: Environment) -> dict[str, Any]:
    """Statistics of a dataset's training split that LM_Mem reads before writing rules."""
    lengths = [len(case.history) for case in env.cases.values()]
    counts: dict[str, int] = {}
    n_train = 0
    for case in env.cases.values():
        for e in case.history:
            n_train += 1
            for category in env.dataset.items[e.item_id].categories:
                counts[category] = counts.get(category, 0) + 1
    total = sum(counts.values()) or 1
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:10]
    times = [e.timestamp for e in env.dataset.interactions]
    users, items = len(env.user_ids), len(env.item_ids)
    return {
        "dataset": env.dataset.name,
        "users": users,
        "items": items,
        "train_interactions": n_train,
        "interaction_density": env.train_matrix.nnz / (users * items) if users and items else 0.0,
        "category_distribution": {name: round(c / total, 4) for name, c in top},
        "mean_history_length": float(np.mean(lengths)) if lengths else 0.0,
        "median_history_length": float(median(lengths)) if lengths else 0.0,
        "time_span_days": (max(times) - min(times)) / 86400 if times and env.dataset.has_time else None,
        "recency_days": recency_words(env),
        "unavailable_features": unavailable_features(env),
    }


def recency_words(env: Environment) -> str:
    """What recency_days measures on this dataset: days between timestamps, or positions read in
    days at the median pace (agents/memrec/order_clock.py)."""
    if env.dataset.has_time:
        return "days between interaction timestamps"
    return (
        f"no timestamps: interaction order read in days, {position_words(environment_pace(env))} (the "
        f"median user's training history taken as {ORDER_HORIZON_DAYS:g} days)"
    )


def unavailable_features(env: Environment) -> list[str]:
    """The curation features this dataset cannot feed, with why (e.g. "metadata_overlap_score: no
    item categories, 0 for every neighbour"); recency_days is approximated, not listed."""
    present = environment_fields(env)
    return [
        f"{feature}: {FIELDS[field]}, 0 for every neighbour"
        for feature, field in CURATION_NEEDS.items()
        if field not in present and feature != "recency_days"
    ]
