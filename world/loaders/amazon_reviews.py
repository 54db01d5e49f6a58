"""Streaming an Amazon review file (2023, or the 2014/2018 layout) into interactions.

Layouts, told apart by the first record's fields:
- 2023 (`<Category>.jsonl[.gz]`): `user_id`, `parent_asin` (else `asin`), `timestamp` in
  milliseconds, `rating`, `title` (the review's headline), `text`.
- 2014/2018 (`<Category>[_5].json[.gz]`, `reviews_<Category>[_5].json.gz`): `reviewerID`, `asin`,
  `unixReviewTime` in seconds, `overall`, `summary`, `reviewText`.

Every review becomes an `Interaction` (user, item, time in seconds, rating). Review text is kept
only for a bounded sample: the `REVIEWS_KEPT_PER_ITEM` earliest reviews of each item (ties in file
order), headline and text joined and cut to `REVIEW_CHARS`. `world.item_reviews` shows an item's
first training reviews from this sample, so the leakage rule (never a held-out interaction's
review) is unchanged; the sample only bounds memory. Ids and ratings are interned: a user's id is
one string however many reviews they wrote. Repeated reviews of one item by one user stay (the
environment's training matrix counts them once).
"""

from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from world.data import Interaction
from world.errors import DataFormatError
from world.loaders.amazon_records import read_records, text_of

REVIEWS_KEPT_PER_ITEM = 6
"""Review texts kept per item (the earliest ones); `world.item_reviews` shows at most 2 of them."""
REVIEW_CHARS = 1000
"""Longest review text kept (cut at a word boundary)."""


@dataclass(frozen=True)
class ReviewLayout:
    """Where one layout keeps each field of a review."""

    name: str
    """Human name of the layout."""
    user: str
    """User id field."""
    items: tuple[str, ...]
    """Item id fields, first present wins."""
    time: str
    """Epoch time field."""
    seconds_per_unit: float
    """Seconds per unit of `time` (0.001 for milliseconds)."""
    rating: str
    """Star rating field."""
    headline: str
    """The review's title / summary field."""
    text: str
    """The review's body field."""


AMAZON_2023 = ReviewLayout(
    "Amazon Reviews 2023", "user_id", ("parent_asin", "asin"), "timestamp", 0.001, "rating", "title", "text"
)
AMAZON_2018 = ReviewLayout(
    "Amazon reviews 2014/2018",
    "reviewerID",
    ("asin",),
    "unixReviewTime",
    1.0,
    "overall",
    "summary",
    "reviewText",
)


def detect_layout(path: Path, line: int, record: dict[str, Any]) -> ReviewLayout:
    """The layout whose user field the record has, or a `DataFormatError`."""
    for layout in (AMAZON_2023, AMAZON_2018):
        if layout.user in record:
            return layout
    raise DataFormatError(
        path, line, "not an Amazon review: expected 'user_id' (2023) or 'reviewerID' (2014/2018)"
    )


class ReviewSample:
    """The earliest `per_item` review texts of each item, kept while streaming (ties: file order)."""

    def __init__(self, per_item: int = REVIEWS_KEPT_PER_ITEM) -> None:
        """An empty sample keeping at most `per_item` texts per item."""
        self.per_item = per_item
        self._kept: dict[str, list[tuple[float, int, str]]] = {}

    def offer(self, item: str, stamp: float, index: int, text: str) -> None:
        """Consider the review at `index` of the interaction list; kept if among the earliest."""
        heap = self._kept.setdefault(item, [])
        entry = (-stamp, -index, text)  # a max-heap on (time, order): the latest kept is at the top
        if len(heap) < self.per_item:
            heapq.heappush(heap, entry)
        elif entry[:2] > heap[0][:2]:
            heapq.heapreplace(heap, entry)

    def attach(self, interactions: list[Interaction]) -> None:
        """Put each kept text on its interaction (interactions are frozen: replaced in place)."""
        for heap in self._kept.values():
            for _, negative_index, text in heap:
                index = -negative_index
                interactions[index] = replace(interactions[index], review=text)
        self._kept.clear()


def _field_id(path: Path, line: int, record: dict[str, Any], fields: tuple[str, ...]) -> str:
    for name in fields:
        value = record.get(name)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return sys.intern(str(value).strip())
    raise DataFormatError(path, line, f"missing field {fields[0]!r}")


def _number(path: Path, line: int, record: dict[str, Any], name: str) -> float | None:
    value = record.get(name)
    if value is None or value == "":
        return None
    try:
        return float(value if not isinstance(value, bool) else "")
    except (TypeError, ValueError):
        raise DataFormatError(path, line, f"field {name!r} is not a number: {value!r}") from None


def read_reviews(path: Path) -> tuple[list[Interaction], ReviewLayout]:
    """Stream `path` (module docstring) into interactions; returns them and the layout read."""
    interactions: list[Interaction] = []
    sample = ReviewSample()
    ratings: dict[float, float] = {}
    layout: ReviewLayout | None = None
    for line, record in read_records(path):
        layout = layout or detect_layout(path, line, record)
        user = _field_id(path, line, record, (layout.user,))
        item = _field_id(path, line, record, layout.items)
        raw_time = _number(path, line, record, layout.time)
        if raw_time is None:
            raise DataFormatError(path, line, f"missing field {layout.time!r}")
        rating = _number(path, line, record, layout.rating)
        if rating is not None:
            rating = ratings.setdefault(rating, rating)
        stamp = raw_time * layout.seconds_per_unit
        headline = text_of(record.get(layout.headline), REVIEW_CHARS)
        body = text_of(record.get(layout.text), REVIEW_CHARS)
        text = f"{headline}: {body}" if headline and body else headline or body
        if text:
            sample.offer(item, stamp, len(interactions), text_of(text, REVIEW_CHARS))
        interactions.append(Interaction(user, item, stamp, rating))
    if layout is None:
        raise DataFormatError(path, None, "no reviews")
    sample.attach(interactions)
    return interactions, layout
