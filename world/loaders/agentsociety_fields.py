"""The list and object fields of AgentSociety / AgentRecBench items, in their sources' shapes.

- Goodreads (UCSD Book Graph): `authors` is a list of `{"author_id": "604031", "role": ""}` objects
  (role empty for the author, else "Illustrator", "Translator", ...); `series` a list of series ids;
  `popular_shelves` a list of `{"count": "3", "name": "to-read"}` objects.
- Yelp Open Dataset: `hours` maps a day name to "H:M-H:M" (minutes unpadded, "8:0-18:30"); a day
  missing or null is closed; "0:0-0:0" (start = end) is read as open all day; a closing time before
  the opening time runs past midnight. `attributes` is an object of flags.
- Amazon: `categories` is a list of names (2023) or a list of category paths, lists of names (2014);
  `details` an object, `features` and `description` lists of strings.

Everything here is shape reading only; the tools decide what the fields mean for a user.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
"""Yelp's day names, in `datetime.weekday()` order."""
DAY_MINUTES = 24 * 60
_HOURS = re.compile(r"\s*(\d{1,2}):(\d{1,2})\s*-\s*(\d{1,2}):(\d{1,2})\s*")

Interval = tuple[int, int]
"""Minutes from the day's midnight: [open, close), close > open (past midnight when > 1440)."""


def flat_categories(value: Any) -> tuple[str, ...]:
    """Category names from a comma string (Yelp), a list (Amazon 2023, Goodreads-style) or a list of
    category paths (Amazon 2014), first occurrence kept."""
    if isinstance(value, str):
        parts: list[Any] = value.split(",")
    elif isinstance(value, list):
        parts = [p for v in value for p in (v if isinstance(v, list) else [v])]
    else:
        parts = []
    names = (str(p).strip() for p in parts if isinstance(p, str | int | float) and not isinstance(p, bool))
    return tuple(dict.fromkeys(n for n in names if n))


def day_interval(text: Any) -> Interval | None:
    """One day's "H:M-H:M" as an interval, None when it does not parse (or the day is null)."""
    match = _HOURS.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    h1, m1, h2, m2 = map(int, match.groups())
    if h1 > 24 or h2 > 24 or m1 > 59 or m2 > 59:
        return None
    start, end = h1 * 60 + m1, h2 * 60 + m2
    if start == end:
        return (0, DAY_MINUTES)
    return (start, end if end > start else end + DAY_MINUTES)


def hours_problem(value: Any) -> str | None:
    """Why a Yelp `hours` value is not an object of day -> "H:M-H:M" (None when it is)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return f"field 'hours' must be an object of day -> \"H:M-H:M\", found {type(value).__name__}"
    for day, text in value.items():
        if day not in DAYS:
            return f"field 'hours' has an unknown day {day!r}"
        if text is not None and day_interval(text) is None:
            return f"field 'hours' has {day} {text!r}, not \"H:M-H:M\""
    return None


def weekly_hours(structured: Mapping[str, Any]) -> dict[int, Interval] | None:
    """weekday -> open interval from an item's `hours` (absent days are closed); None without hours."""
    hours = structured.get("hours")
    if not isinstance(hours, dict) or not hours:
        return None
    week = {DAYS.index(day): day_interval(text) for day, text in hours.items() if day in DAYS}
    return {day: interval for day, interval in week.items() if interval is not None}


def contributors(structured: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(key, label) of each credited author and series in Goodreads' shapes: an author object by its
    `author_id` (labelled by `name` when the object has one, with its role when not empty), a plain
    string as a name; series ids as "series <id>". Order kept, repeats dropped."""
    found: dict[str, str] = {}
    for entry in structured.get("authors") or []:
        if isinstance(entry, dict):
            ident, name = entry.get("author_id"), entry.get("name")
            if ident in (None, "") and not name:
                continue
            key = f"author {ident}" if ident not in (None, "") else str(name)
            label = str(name) if name else key
            role = str(entry.get("role") or "").strip()
            found.setdefault(key, f"{label} ({role})" if role else label)
        elif isinstance(entry, str | int) and str(entry).strip():
            found.setdefault(str(entry).strip(), str(entry).strip())
    for series in structured.get("series") or []:
        if isinstance(series, str | int) and str(series).strip():
            key = f"series {series}"
            found.setdefault(key, key)
    return list(found.items())
