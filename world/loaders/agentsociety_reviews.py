"""Streaming AgentSociety's `review.json` into interactions, memory following what is kept.

A review is `user_id`, `item_id`, `stars` (or `rating`), `text` (or `review_text`) and a time, the
first of `date` (ISO like Yelp's "2018-07-07 22:09:11", or Goodreads' "Sun Jul 30 07:44:10 -0700
2017"), `timestamp` (epoch s or ms, Amazon), `date_added`; naive times are UTC. No time in any
review: file order, `has_time=False`; only some dated: an error. Every other field is dropped as
the line streams by.

Every review becomes an `Interaction`; its text is kept only when it is
- among the `REVIEWS_KEPT_PER_ITEM` earliest reviews of its item (ties in file order), or
- written by a user a task file evaluates (their own history's reviews, which the tools show them),
and is cut to `REVIEW_CHARS`. The earliest reviews are the ones a time cutoff leaves visible, and
`world.item_reviews` still draws an item's training reviews from them, so the leakage rule is
unchanged; the sample only bounds memory. User and item ids are interned (one string per id,
the item's the very string the catalog is keyed by) and equal ratings share one float.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from world.data import Interaction, Item
from world.errors import DataFormatError
from world.loaders.agentsociety_json import read_json_records, required_id
from world.loaders.amazon_records import text_of
from world.loaders.amazon_reviews import ReviewSample

TIME_FIELDS = ("date", "timestamp", "date_added")
RATING_FIELDS = ("stars", "rating")
TEXT_FIELDS = ("text", "review_text")
DATE_FORMATS = ("%a %b %d %H:%M:%S %z %Y", "%Y/%m/%d %H:%M:%S", "%m/%d/%Y")
MILLISECONDS_ABOVE = 1e11
"""Epoch numbers above this are milliseconds (1e11 seconds is the year 5138)."""
REVIEWS_KEPT_PER_ITEM = 10
"""Review texts kept per item (the earliest): ChainRec's candidate entry shows up to 10 others'
reviews of an item (agents/chainrec/mining/tasks.py CANDIDATE_REVIEWS), ARAG's item text 2."""
REVIEW_CHARS = 1000
"""Longest review text kept (cut at a word boundary); the tools show at most 600 by default."""


def parse_time(raw: Any) -> float | None:
    """Epoch seconds from an epoch number (s or ms) or a date string; None when neither."""
    if isinstance(raw, str) and re.fullmatch(r"\d+(\.\d+)?", raw.strip()):
        raw = float(raw)
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return raw / 1000 if raw > MILLISECONDS_ABOVE else float(raw)
    if not isinstance(raw, str):
        return None
    for form in (None, *DATE_FORMATS):
        try:
            moment = datetime.fromisoformat(raw) if form is None else datetime.strptime(raw, form)
        except ValueError:
            continue
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None


def _rating(path: Path, line: int, record: dict[str, Any]) -> float | None:
    for field in RATING_FIELDS:
        value = record.get(field)
        if value is None or value == "":
            continue
        try:
            return float(value if not isinstance(value, bool) else "")
        except (TypeError, ValueError):
            problem = f"field {field!r} is not a number: {value!r}"
            raise DataFormatError(path, line, problem) from None
    return None


def load_reviews(
    path: Path, items: Mapping[str, Item], evaluated: Collection[str] = ()
) -> tuple[list[Interaction], bool]:
    """Stream `review.json` (module docstring); every review text of the `evaluated` users is kept.
    Returns the interactions and whether they carry real times."""
    interactions: list[Interaction] = []
    sample = ReviewSample(REVIEWS_KEPT_PER_ITEM)
    ratings: dict[float, float] = {}
    undated, first_undated = 0, 0
    for line, record in read_json_records(path):
        user = sys.intern(required_id(path, line, record, "user_id"))
        item = sys.intern(required_id(path, line, record, "item_id"))
        if item not in items:
            raise DataFormatError(path, line, f"review refers to unknown item {item!r}")
        field = next((f for f in TIME_FIELDS if record.get(f) not in (None, "")), None)
        stamp = parse_time(record[field]) if field else float(len(interactions))
        if stamp is None:
            raise DataFormatError(path, line, f"field {field!r} is not a date: {record[field]!r}")
        if not field:
            undated, first_undated = undated + 1, first_undated or line
        rating = _rating(path, line, record)
        if rating is not None:
            rating = ratings.setdefault(rating, rating)
        raw = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str)), "")
        text = text_of(raw, REVIEW_CHARS) or None
        if text:
            sample.offer(item, stamp, len(interactions), text)
        own = text if user in evaluated else None
        interactions.append(Interaction(user, item, stamp, rating, own))
    if not interactions:
        raise DataFormatError(path, None, "no reviews")
    if undated and undated < len(interactions):
        fields = ", ".join(repr(f) for f in TIME_FIELDS)
        raise DataFormatError(path, first_undated, f"review has no time ({fields}) while others have one")
    sample.attach(interactions)
    return interactions, not undated
