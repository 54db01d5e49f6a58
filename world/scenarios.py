"""The scenarios: which users are evaluated and which history they see.

The five AgentRecBench scenarios (`SCENARIOS`) evaluate the leave-one-out split's users (world/split.py:
3 or more interactions; the last is the test target, the one before it the validation / warm-up
item, the rest training history):
- `classic`: everything before the target is visible.
- `cold_user`: only the last `COLD_USER_ITEMS` items before the target are visible. The older ones are
  hidden from the evaluated user, so nothing a run trains (memories, pools, baselines' models,
  planners) may have read them: `world.evaluation_world` builds the run's world without them.
- `cold_item`: users whose target is among the least popular items.
- `evolving_long` / `evolving_short`: only the `WINDOW_DAYS` days before the target are visible.

`cold_start` (`BENCH_SCENARIOS` adds it) is AMEM4Rec's cold-start protocol (its Table 3: "users who
interact with only a few items (2-3 items)"): users whose whole interaction sequence, the test target
included, holds `COLD_START_SIZES` (2 or 3) interactions. The split is the same leave-one-out: the
last interaction is the test target, the one before it the validation item, so 1-2 items are visible
and 0-1 are training history. The default split drops users with fewer than 3 interactions;
`cold_start_cases` splits the 2-interaction ones too, for this scenario only (every other scenario
keeps its users). Nothing of an evaluated user is hidden but the target, so memories and models are
built from the other users' training data plus the user's visible items (`world.evaluation_world`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

import numpy as np

from world.data import Dataset
from world.errors import ProtocolError
from world.split import UserCase, leave_one_out

AgentRecBenchScenario = Literal["classic", "cold_user", "cold_item", "evolving_long", "evolving_short"]
"""The five AgentRecBench scenarios."""
SCENARIOS: tuple[str, ...] = AgentRecBenchScenario.__args__
"""The five AgentRecBench scenarios (what ChainRec's scenario features one-hot encode)."""
Scenario = Literal["classic", "cold_user", "cold_item", "evolving_long", "evolving_short", "cold_start"]
"""Which users are evaluated and which part of their history a method may see."""
BENCH_SCENARIOS: tuple[str, ...] = Scenario.__args__
"""Every scenario `recgraph bench --scenario` runs: the five and AMEM4Rec's `cold_start`."""

DAY = 86_400.0
COLD_USER_ITEMS = 3
"""cold_user: only this many of the most recent history items are visible."""
COLD_ITEM_QUANTILE = 0.2
"""cold_item: targets whose training popularity is at most this quantile of the catalog's."""
WINDOW_DAYS = {"evolving_long": 90, "evolving_short": 7}
"""evolving_*: history restricted to this many days before the target."""
COLD_START_SIZES = (2, 3)
"""cold_start: users with this many interactions in all (the test target included)."""
OWN_SPLIT = frozenset({"cold_start"})
"""Scenarios whose world is the dataset split down to 2 interactions per user."""


def check_scenario(scenario: str, has_time: bool) -> None:
    """Refuse unknown scenarios and time-based ones on data without timestamps."""
    if scenario not in BENCH_SCENARIOS:
        raise ProtocolError(f"unknown scenario {scenario!r}; choose one of {', '.join(BENCH_SCENARIOS)}")
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
    if scenario == "cold_start":
        sizes = " or ".join(str(n) for n in COLD_START_SIZES)
        return (
            f"cold_start keeps users with {sizes} interactions in all, the test target included (for it "
            "the split goes down to 2 interactions)"
        )
    return f"{scenario} keeps every split user"


def is_cold_start(case: UserCase) -> bool:
    """Whether the user has `COLD_START_SIZES` interactions in all (the test target included)."""
    return len(case.before_target()) + 1 in COLD_START_SIZES


def cold_start_cases(dataset: Dataset) -> dict[str, UserCase]:
    """The split of the users `cold_start` evaluates: leave-one-out down to 2 interactions (the
    default split stops at 3), then only users with `COLD_START_SIZES` interactions."""
    return {u: case for u, case in leave_one_out(dataset, min_interactions=2).items() if is_cold_start(case)}


def eligible_users(
    cases: Mapping[str, UserCase], scenario: str, popularity: Mapping[str, int], n_items: int
) -> list[str]:
    """Users evaluated under `scenario` (every split user, filtered for cold_item / evolving /
    cold_start, whose users come from `cold_start_cases`' split; the rule in words: `scenario_rule`)."""
    users = list(cases)
    if scenario == "cold_item":
        threshold = cold_item_threshold(popularity, n_items)
        users = [u for u in users if popularity.get(cases[u].target.item_id, 0) <= threshold]
    elif scenario in WINDOW_DAYS:
        # A window with nothing in it leaves no user to speak of: such users are skipped.
        users = [u for u in users if visible_history(cases[u], scenario)]
    elif scenario == "cold_start":
        users = [u for u in users if is_cold_start(cases[u])]
    return users
