"""Domain statistics LM_Mem reads before writing a domain's curation rules."""

from __future__ import annotations

from statistics import median
from typing import TYPE_CHECKING, Any

import numpy as np

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
    }
