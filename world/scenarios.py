"""The five AgentRecBench scenarios: which users are evaluated and which history they see."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from world.errors import ProtocolError
from world.split import UserCase

Scenario = Literal["classic", "cold_user", "cold_item", "evolving_long", "evolving_short"]
"""Which part of a user's history a method may see (the five AgentRecBench scenarios)."""
SCENARIOS: tuple[str, ...] = Scenario.__args__

DAY = 86_400.0
COLD_USER_ITEMS = 3
"""cold_user: only this many of the most recent history items are visible."""
COLD_ITEM_QUANTILE = 0.2
"""cold_item: targets whose training popularity is at most this quantile of the catalog's."""
WINDOW_DAYS = {"evolving_long": 90, "evolving_short": 7}
"""evolving_*: history restricted to this many days before the target."""


def check_scenario(scenario: str, has_time: bool) -> None:
    """Refuse unknown scenarios and time-based ones on data without timestamps."""
    if scenario not in SCENARIOS:
        raise ProtocolError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    if scenario in WINDOW_DAYS and not has_time:
        # Positions say which came first, not how many days passed: a "last k items" cut would be
        # cold_user under another name, so the day windows are refused rather than redefined.
        raise ProtocolError(
            f"scenario {scenario!r} needs timestamps (it keeps the {WINDOW_DAYS[scenario]} days before "
            "the target), but this dataset only has interaction order; use classic, cold_user "
            "(the last 3 items) or cold_item"
        )


def visible_history(case: UserCase, scenario: str) -> list[str]:
    """Item ids the method may see for this user at test time, oldest first."""
    events = case.before_target()
    if scenario == "cold_user":
        events = events[-COLD_USER_ITEMS:]
    elif scenario in WINDOW_DAYS:
        start = case.target.timestamp - WINDOW_DAYS[scenario] * DAY
        events = tuple(e for e in events if e.timestamp >= start)
    return [e.item_id for e in events]


def cold_item_threshold(popularity: Mapping[str, int], n_items: int) -> float:
    """cold_item's bar: the `COLD_ITEM_QUANTILE` quantile of training interactions per catalog item
    (items never interacted with count as 0)."""
    counts = np.zeros(max(n_items, 1))
    counts[: len(popularity)] = sorted(popularity.values())
    return float(np.quantile(counts, COLD_ITEM_QUANTILE))


def scenario_rule(scenario: str, popularity: Mapping[str, int], n_items: int) -> str:
    """Which split users `scenario` evaluates, in words (with cold_item's threshold in numbers)."""
    if scenario == "cold_item":
        threshold = cold_item_threshold(popularity, n_items)
        return (
            f"cold_item keeps users whose target has at most {threshold:g} training interactions "
            f"(the {COLD_ITEM_QUANTILE:.0%} popularity quantile of the {n_items} items)"
        )
    if scenario in WINDOW_DAYS:
        return (
            f"{scenario} keeps users with at least one interaction in the {WINDOW_DAYS[scenario]} days "
            "before their target"
        )
    if scenario == "cold_user":
        return f"cold_user keeps every split user (it shows only their last {COLD_USER_ITEMS} items)"
    return f"{scenario} keeps every split user"


def eligible_users(
    cases: Mapping[str, UserCase], scenario: str, popularity: Mapping[str, int], n_items: int
) -> list[str]:
    """Users evaluated under `scenario` (every split user, filtered for cold_item / evolving; the
    rule in words: `scenario_rule`)."""
    users = list(cases)
    if scenario == "cold_item":
        threshold = cold_item_threshold(popularity, n_items)
        users = [u for u in users if popularity.get(cases[u].target.item_id, 0) <= threshold]
    elif scenario in WINDOW_DAYS:
        # A window with nothing in it leaves no user to speak of: such users are skipped.
        users = [u for u in users if visible_history(cases[u], scenario)]
    return users
