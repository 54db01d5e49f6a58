"""GeoContext's time feasibility: is a candidate open when the user usually goes out?

The user's recent visits are the most recent `VISITS` history rows with a date; a visit happened on
its date's weekday, within the visited place's opening hours that day (the whole day when the place
has no hours or is listed closed then). A candidate's hours fit is the mean over those visits of the
share of the visit window during which the candidate is open that weekday (0 when it is closed that
day); a candidate without opening hours has no fit (unknown, not penalised). Days are the weekdays of
Yelp's `hours`, past-midnight closing included in the day it opens.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from world.loaders.agentsociety_fields import DAY_MINUTES, DAYS, Interval, weekly_hours

VISITS = 10
"""Most recent dated history rows that make the user's visit windows."""
WHOLE_DAY: Interval = (0, DAY_MINUTES)


def _weekday(row: Mapping[str, Any]) -> int | None:
    """The weekday of a `get_user` row's date (None when undated)."""
    try:
        return date.fromisoformat(str(row["date"])[:10]).weekday()
    except (KeyError, ValueError):
        return None


def visit_windows(
    rows: Sequence[Mapping[str, Any]], places: Sequence[Mapping[str, Any]]
) -> list[tuple[int, Interval]]:
    """(weekday, window) of the user's most recent dated visits: `rows` are `get_user` rows newest
    first, `places` their `get_item` records in the same order."""
    windows = []
    for row, place in zip(rows, places, strict=True):
        day = _weekday(row)
        if day is None:
            continue
        week = weekly_hours(place.get("structured") or {})
        windows.append((day, (week or {}).get(day) or WHOLE_DAY))
        if len(windows) == VISITS:
            break
    return windows


def _overlap(a: Interval, b: Interval) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def hours_fit(record: Mapping[str, Any], windows: Sequence[tuple[int, Interval]]) -> float | None:
    """Mean share of the visit windows the candidate is open for; None without hours or visits."""
    week = weekly_hours(record.get("structured") or {})
    if week is None or not windows:
        return None
    shares = []
    for day, window in windows:
        opened = week.get(day)
        shares.append(_overlap(opened, window) / (window[1] - window[0]) if opened else 0.0)
    return sum(shares) / len(shares)


def usual_days(windows: Sequence[tuple[int, Interval]], top: int = 3) -> str:
    """The weekdays the user goes out most, "Sat (3), Fri (2)" (ties in week order)."""
    counts = Counter(day for day, _ in windows)
    ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:top]
    return ", ".join(f"{DAYS[day][:3]} ({n})" for day, n in ranked) or "none"
