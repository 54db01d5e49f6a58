"""What the environment tools read: one dataset's interactions indexed by user and by item, its
domain flags, and the visibility rule of an episode (built once per process per dataset).

Visibility: an episode (user u, scenario s) sees u's interactions the scenario shows (never the
held-out target); about everybody else, only interactions before u's target time (when the dataset
has real timestamps) and never anyone's held-out target or validation interaction: the item side
holds what the other methods learn from (training interactions; docs/benchmarking.md, "One
protocol, the same evidence"), so ChainRec's item statistics and reviews carry no evidence theirs
lack.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from world.data import Interaction
from world.environment import Environment
from world.loaders.agentsociety_fields import contributors
from world.progress import report
from world.split import held_out_events

AUTHOR_KEYS = ("author", "authors", "series")
"""Item attributes naming an author or a series (AuthorPreference)."""
LATITUDE_KEYS = ("latitude", "lat")
LONGITUDE_KEYS = ("longitude", "lon", "lng")


def location_in(attributes: Mapping[str, str]) -> tuple[float, float] | None:
    """(latitude, longitude) from item or user attributes, when both parse as coordinates."""
    lat = next((attributes[k] for k in LATITUDE_KEYS if k in attributes), None)
    lon = next((attributes[k] for k in LONGITUDE_KEYS if k in attributes), None)
    if lat is None or lon is None:
        return None
    try:
        point = (float(lat), float(lon))
    except ValueError:
        return None
    finite = all(math.isfinite(v) for v in point)
    return point if finite and -90 <= point[0] <= 90 and -180 <= point[1] <= 180 else None


def city_in(attributes: Mapping[str, str]) -> str | None:
    """The place as "City, ST" (or the city alone) from item or user attributes; None without a city."""
    city = attributes.get("city", "").strip()
    state = attributes.get("state", "").strip()
    return (f"{city}, {state}" if state else city) if city else None


def authors_in(attributes: Mapping[str, str], structured: Mapping[str, Any] | None = None) -> list[str]:
    """Author / series names in item attributes (comma- or semicolon-separated values), then the
    keys of Goodreads' author objects and series ids in the item's structured fields."""
    names: list[str] = []
    for key in AUTHOR_KEYS:
        raw = attributes.get(key, "")
        names += [n.strip() for n in raw.replace(";", ",").split(",") if n.strip()]
    names += [key for key, _ in contributors(structured or {})]
    return list(dict.fromkeys(names))


@dataclass
class ItemEvents:
    """Everybody's interactions with one item except held-out targets, oldest first, with prefix
    counts so that "before time t" statistics are a binary search away."""

    events: list[Interaction] = field(default_factory=list)
    times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rated: np.ndarray = field(default_factory=lambda: np.zeros(1))
    """Prefix counts of rated events (length n + 1)."""
    rating_sum: np.ndarray = field(default_factory=lambda: np.zeros(1))
    """Prefix sums of ratings (length n + 1)."""
    reviewed: np.ndarray = field(default_factory=lambda: np.zeros(1))
    """Prefix counts of events with review text (length n + 1)."""

    def end(self, cutoff: float | None) -> int:
        """How many events come before `cutoff` (all without one)."""
        return len(self.events) if cutoff is None else bisect_left(self.times, cutoff)


class Corpus:
    """A dataset's interactions by user and by item, and what the dataset carries."""

    def __init__(self, env: Environment) -> None:
        """Index `env`'s interactions (held-out targets and validation interactions are kept out of
        the item side)."""
        data = env.dataset
        self.env = env
        held_out = held_out_events(env.cases)
        by_user: dict[str, list[Interaction]] = defaultdict(list)
        by_item: dict[str, list[Interaction]] = defaultdict(list)
        item_side_by_user: dict[str, list[Interaction]] = defaultdict(list)
        for event in data.interactions:
            by_user[event.user_id].append(event)
            if (event.user_id, event.item_id, event.timestamp) not in held_out:
                by_item[event.item_id].append(event)
                item_side_by_user[event.user_id].append(event)
        self.item_side_by_user = dict(item_side_by_user)
        """User -> their item-side events (held-out ones left out) in the dataset's order: what
        `own_on_item` groups by item."""
        self.own_by_viewer: dict[str, dict[str, list[Interaction]]] = {}
        """Viewer -> `own_on_item`'s index (written by `own_on_item`, on the viewer's first
        episode): an index of every (user, item) pair took 238 MB on ML-1M in every process that ran
        a ChainRec tool; a process that visits every user grows back to about that."""
        self.by_user = {u: sorted(events, key=lambda e: e.timestamp) for u, events in by_user.items()}
        self.by_item = {i: self._index(events) for i, events in by_item.items()}
        self.presplit = data.presplit is not None
        self.domain = {
            "ratings": any(e.rating is not None for e in data.interactions),
            "reviews": any(e.review for e in data.interactions),
            "categories": any(item.categories for item in data.items.values()),
            "timestamps": data.has_time,
            "authors": any(authors_in(item.attributes, item.structured) for item in data.items.values()),
            "locations": any(
                location_in(item.attributes) or city_in(item.attributes) for item in data.items.values()
            ),
        }
        ratings = [e.rating for e in data.interactions if e.rating is not None]
        self.rating_max = max(ratings) if ratings else 5.0
        self.rating_mean = float(np.mean(ratings)) if ratings else 0.0

    @staticmethod
    def _index(events: list[Interaction]) -> ItemEvents:
        events = sorted(events, key=lambda e: e.timestamp)
        ratings = np.array([e.rating if e.rating is not None else 0.0 for e in events])
        rated = np.array([e.rating is not None for e in events], dtype=np.float64)
        reviewed = np.array([bool(e.review) for e in events], dtype=np.float64)
        return ItemEvents(
            events,
            np.array([e.timestamp for e in events], dtype=np.float64),
            np.concatenate([[0.0], np.cumsum(rated)]),
            np.concatenate([[0.0], np.cumsum(ratings)]),
            np.concatenate([[0.0], np.cumsum(reviewed)]),
        )

    def visible_events(self, user_id: str, scenario: str) -> list[Interaction]:
        """The user's interactions `scenario` shows, oldest first, with ratings and reviews."""
        visible = self.env.history(user_id, scenario)
        case = self.env.cases.get(user_id)
        if not visible:
            return []
        if case is None:
            return list(self.by_user.get(user_id, []))[-len(visible) :]
        before = case.before_target()
        return [self._with_details(e) for e in before[len(before) - len(visible) :]]

    def _with_details(self, event: Interaction) -> Interaction:
        """A split event with its rating and review (a task file's split keeps only ids and times)."""
        if not self.presplit or event.rating is not None or event.review is not None:
            return event
        same = [e for e in self.by_user.get(event.user_id, []) if e.item_id == event.item_id]
        exact = [e for e in same if e.timestamp == event.timestamp]
        return (exact or same or [event])[-1]

    def cutoff(self, user_id: str) -> float | None:
        """Others' interactions are shown only before this time (the user's target time)."""
        case = self.env.cases.get(user_id)
        return case.target.timestamp if case is not None and self.env.dataset.has_time else None

    def own_on_item(self, viewer: str) -> Mapping[str, list[Interaction]]:
        """Item -> `viewer`'s item-side events with it, in the dataset's order (what to leave out
        of the item side for them)."""
        index = self.own_by_viewer.get(viewer)
        if index is None:
            own: dict[str, list[Interaction]] = defaultdict(list)
            for event in self.item_side_by_user.get(viewer, ()):
                own[event.item_id].append(event)
            index = self.own_by_viewer.setdefault(viewer, dict(own))
        return index

    def _own(self, item_id: str, viewer: str, cutoff: float | None) -> list[Interaction]:
        events = self.own_on_item(viewer).get(item_id, ())
        return [e for e in events if cutoff is None or e.timestamp < cutoff]

    def item_side(self, item_id: str, viewer: str, cutoff: float | None) -> list[Interaction]:
        """Others' interactions with `item_id` an episode of `viewer` may see, oldest first."""
        indexed = self.by_item.get(item_id)
        if indexed is None:
            return []
        return [e for e in indexed.events[: indexed.end(cutoff)] if e.user_id != viewer]

    def item_stats(self, item_id: str, viewer: str, cutoff: float | None) -> tuple[int, float | None, int]:
        """(interactions, mean rating or None, reviews) of others with `item_id`, visible to the episode."""
        indexed = self.by_item.get(item_id)
        if indexed is None:
            return 0, None, 0
        end = indexed.end(cutoff)
        own = self._own(item_id, viewer, cutoff)
        rated = indexed.rated[end] - sum(e.rating is not None for e in own)
        total = indexed.rating_sum[end] - sum(e.rating or 0.0 for e in own)
        reviews = int(indexed.reviewed[end]) - sum(bool(e.review) for e in own)
        return end - len(own), (float(total / rated) if rated > 0 else None), reviews

    def other_events(self, user_id: str, cutoff: float | None) -> list[Interaction]:
        """Another user's interactions an episode may see: before `cutoff`, their training
        interactions only (no held-out target, no validation interaction)."""
        case = self.env.cases.get(user_id)
        events = list(case.history) if case is not None else self.by_user.get(user_id, [])
        return [self._with_details(e) for e in events if cutoff is None or e.timestamp < cutoff]


PROGRESS_LABEL = "interaction index"
"""The progress row of building a dataset's `Corpus` (once per process)."""


def _build(env: Environment) -> Corpus:
    total = len(env.dataset.interactions)
    report(PROGRESS_LABEL, 0, total)
    corpus = Corpus(env)
    report(PROGRESS_LABEL, total, total)
    return corpus


def corpus_of(env: Environment) -> Corpus:
    """The process-wide `Corpus` of `env` (built on first use, shown as a progress row)."""
    return env.resource("chainrec_corpus", lambda: _build(env))
