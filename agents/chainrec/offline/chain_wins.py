"""Which chains win per scenario on the held-out training tasks: for each planner of the held-out
comparison (planner_eval.py), the tool sets it chose most often on each scenario's tasks, with the
share of those tasks and the mean AvgHR@{1,3,5} they reached; the oracle's rows say which sets
would have won. Written to evaluation.json (`chains_by_scenario`) and metrics.json's
`planner_training`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.chainrec.offline.rollout import quality_of

TOP = 3
"""Tool sets listed per planner and scenario."""


def chains_by_scenario(
    held: Sequence[dict[str, Any]], chains: Mapping[str, Sequence[Sequence[str]]], top: int = TOP
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """scenario -> planner -> its `top` most chosen tool sets on that scenario's held-out tasks
    (`held`: the rows; `chains[planner][i]`: the tools it called on `held[i]`), each named as
    `policy_data.set_name` names sets (sorted, '+'-joined), with its share
    of the scenario's tasks and its mean AvgHR over them (None when no row recorded it); ties in
    count keep the first chosen."""
    found: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for scenario in sorted({row["task"]["scenario"] for row in held}):
        rows = [i for i, row in enumerate(held) if row["task"]["scenario"] == scenario]
        found[scenario] = {}
        for planner, picked in chains.items():
            named: dict[str, list[float]] = defaultdict(list)
            counts: Counter[str] = Counter()
            for i in rows:
                name = "+".join(sorted(picked[i])) or "(none)"  # policy_data.set_name's naming
                counts[name] += 1
                quality = quality_of(held[i], list(picked[i]))
                if quality is not None:
                    named[name].append(quality)
            found[scenario][planner] = [
                {
                    "tools": name,
                    "share": round(count / len(rows), 4),
                    "avg_hr": round(float(np.mean(named[name])), 4) if named[name] else None,
                }
                for name, count in counts.most_common(top)
            ]
    return found
