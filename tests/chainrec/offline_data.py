"""Hand-made trajectory rows for the ChainRec planner-training tests: no environment, no tool runs.

Each toy task offers three tools. Whether the expert (best) chain is [ItemProfile] or
[LongTermPreference] depends on a task fact the policy sees (history length), so a small policy can
fit every training decision; every other chain scores lower.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

TOOLS = ["LongTermPreference", "ItemSemantic", "ItemProfile"]
DOMAIN = {
    "ratings": True,
    "reviews": False,
    "categories": True,
    "timestamps": True,
    "authors": False,
    "locations": False,
}


def _entry(tool: str, user: str) -> dict[str, Any]:
    return {
        "step": 0,
        "tool": tool,
        "facets": [],
        "confidence": 0.5,
        "summary": f"{tool} evidence for user {user}",
        "items": [],
        "source": "heuristic",
        "stats": {},
        "evidence": [],
    }


def toy_row(number: int) -> dict[str, Any]:
    """Task `number`: short history (odd) -> ItemProfile alone is best; long (even) -> LongTerm."""
    user = f"u{number}"
    short = number % 2 == 1
    best = "2" if short else "0"
    chains = []
    for k in (1, 2, 3):
        for chain in permutations(range(3), k):
            code = ".".join(map(str, chain))
            value = 0.9 if code == best else round(0.2 + 0.1 * (number % 3) - 0.01 * k, 4)
            chains.append([code, code, value])
    return {
        "method": "chainrec_trajectories",
        "user_id": user,
        "task": {"user_id": user, "target": "t", "candidates": ["t", "n1", "n2"], "scenario": "classic"},
        "facts": {
            "history_items": 2 if short else 300,
            "days_since_last": 3.0,
            "has_timestamps": True,
            "candidates_log_pop_mean": 2.0,
            "candidates_log_pop_std": 0.5,
            "candidates_log_pop_max": 3.0,
            "candidates_cold_fraction": 0.1,
            "domain": DOMAIN,
            "scenario": "classic",
        },
        "tools": TOOLS,
        "tool_outputs": {tool: _entry(tool, user) for tool in TOOLS},
        "rankings": {},
        "chains": chains,
        "enumerated": True,
    }


def toy_rows(count: int = 12) -> list[dict[str, Any]]:
    """`count` toy tasks, alternating short and long histories."""
    return [toy_row(n) for n in range(count)]
