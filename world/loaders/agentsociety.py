"""Loader 2: AgentSociety / AgentRecBench JSON lines with recommendation tasks.

Files in `folder`, one JSON object a line (a single JSON array is accepted too):
- `item.json`: `item_id`; `title` (else `name`, Yelp; else `title_without_series`); `categories`
  as a list (Amazon 2023), a list of category paths (Amazon 2014) or a comma-separated string
  (Yelp); `description` as a string or a list of strings; every other scalar (stars, city, state,
  latitude, longitude, price, source, ...) becomes a string attribute, `publication_year` becomes
  `year`; every list and object field (Goodreads `authors`, `series`, `popular_shelves`; Yelp
  `hours`, `attributes`; Amazon `details`, `features`, category paths) is kept in its own shape in
  `Item.structured` (world/loaders/agentsociety_fields.py), except media URLs (`images`, `videos`).
  Yelp `hours` must be an object of day -> "H:M-H:M" (or null).
- `user.json` (optional): `user_id` and scalar attributes (`friends` is dropped), kept for the
  users that have a review or a task.
- `review.json`: world/loaders/agentsociety_reviews.py (each review an interaction; review texts
  kept for a bounded sample per item and for the users the tasks evaluate).
- Tasks (optional; world/loaders/agentsociety_tasks.py): each fixes its user's split and
  candidate pool; a task's `loc` (other than [-1, -1]) becomes the user's `latitude`/`longitude`
  attributes unless user.json gives them.

Every file may be gzipped and is streamed (world/loaders/agentsociety_json.py), so memory follows
what is kept: the catalog with lists cut to `STRUCTURED_ENTRIES` entries and descriptions to
`DESCRIPTION_CHARS`, ids, category names, attribute names and short values interned (one string
for "Restaurants" or "to-read" however many items name it), and the interactions.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from world.data import Dataset, Item
from world.errors import DataFormatError
from world.loaders.agentsociety_fields import flat_categories, hours_problem
from world.loaders.agentsociety_json import read_json_records, required_id
from world.loaders.agentsociety_reviews import load_reviews, parse_time
from world.loaders.agentsociety_tasks import find_tasks, read_tasks, task_splits
from world.loaders.amazon_records import text_of
from world.loaders.text import clean_title

__all__ = ["load_agentsociety", "load_items", "load_users", "parse_time"]

TITLE_FIELDS = ("title", "name", "title_without_series")
ITEM_USED = {"item_id", *TITLE_FIELDS, "categories", "description", "publication_year"}
MEDIA_FIELDS = {"images", "videos"}
"""Amazon's image and video URL objects: nothing a tool reads, so not kept."""
USER_SKIPPED = {"user_id", "friends"}
STRUCTURED_ENTRIES = 30
"""Entries kept of each list in `Item.structured`, at every depth (the first ones: Goodreads sorts
`popular_shelves` by count); the ChainRec tools show 20."""
DESCRIPTION_CHARS = 2000
"""Longest item description kept (cut at a word boundary); the tools show 300."""
INTERN_CHARS = 64
"""Strings up to this long in attributes and structured fields are interned."""


def _shared(text: str) -> str:
    """`text` interned when short (names and values many records repeat)."""
    return sys.intern(text) if len(text) <= INTERN_CHARS else text


def _scalars(record: dict[str, Any], skipped: set[str]) -> dict[str, str]:
    """Every scalar field not in `skipped`, as text."""
    texts = {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value).strip()
        for key, value in record.items()
        if key not in skipped and value is not None and not isinstance(value, list | dict)
    }
    return {sys.intern(key): _shared(text) for key, text in texts.items() if text}


def _compact(value: Any) -> Any:
    """`value` with every list cut to `STRUCTURED_ENTRIES` and its keys and short strings shared."""
    if isinstance(value, str):
        return _shared(value)
    if isinstance(value, list):
        return [_compact(entry) for entry in value[:STRUCTURED_ENTRIES]]
    if isinstance(value, dict):
        return {_shared(str(key)): _compact(entry) for key, entry in value.items()}
    return value


def _structured(path: Path, line: int, record: dict[str, Any]) -> dict[str, Any]:
    """Every non-empty list and object field in its own shape (category paths when `categories`
    nests lists), bounded by `_compact`; Yelp `hours` checked."""
    if problem := hours_problem(record.get("hours")):
        raise DataFormatError(path, line, problem)
    kept = {
        key: value
        for key, value in record.items()
        if key not in ITEM_USED | MEDIA_FIELDS and isinstance(value, list | dict) and value
    }
    categories = record.get("categories")
    if isinstance(categories, list) and any(isinstance(c, list) for c in categories):
        kept["categories"] = categories
    return {sys.intern(key): _compact(value) for key, value in kept.items()}


def load_items(path: Path) -> dict[str, Item]:
    """Read `item.json` into the catalog."""
    items: dict[str, Item] = {}
    for line, record in read_json_records(path):
        item_id = sys.intern(required_id(path, line, record, "item_id"))
        if item_id in items:
            raise DataFormatError(path, line, f"duplicate item id {item_id!r}")
        titles = (record.get(f) for f in TITLE_FIELDS)
        title = next((clean_title(str(t)) for t in titles if t is not None and clean_title(str(t))), "")
        attributes = _scalars(record, ITEM_USED)
        if record.get("publication_year") not in (None, "") and "year" not in attributes:
            attributes["year"] = _shared(str(record["publication_year"]))
        items[item_id] = Item(
            id=item_id,
            title=title or f"item {item_id}",
            categories=tuple(_shared(name) for name in flat_categories(record.get("categories"))),
            description=text_of(record.get("description"), DESCRIPTION_CHARS) or None,
            attributes=attributes,
            structured=_structured(path, line, record),
        )
    if not items:
        raise DataFormatError(path, None, "no items")
    return items


def load_users(path: Path, known: set[str] | None = None) -> dict[str, dict[str, str]]:
    """Read an optional `user.json` into attributes by user id (only the `known` users when given)."""
    users: dict[str, dict[str, str]] = {}
    for line, record in read_json_records(path) if path.is_file() else ():
        user = required_id(path, line, record, "user_id")
        if known is None or user in known:
            users[sys.intern(user)] = _scalars(record, USER_SKIPPED)
    return users


def load_agentsociety(folder: Path, name: str | None = None, tasks_from: Path | None = None) -> Dataset:
    """Load an AgentSociety / AgentRecBench folder (see the module docstring) into a `Dataset`; the
    tasks come from `tasks_from` when given (an AgentRecBench scenario's task folder,
    world/loaders/agentrecbench.py), else from `folder`."""
    items = load_items(folder / "item.json")
    pairs = find_tasks(tasks_from if tasks_from is not None else folder)
    tasks = read_tasks(pairs, items) if pairs else []
    evaluated = {task.user for task in tasks}
    interactions, has_time = load_reviews(folder / "review.json", items, evaluated)
    users = load_users(folder / "user.json", {event.user_id for event in interactions} | evaluated)
    presplit, places = task_splits(tasks, interactions) if tasks else (None, {})
    for user, (latitude, longitude) in places.items():
        own = users.setdefault(user, {})
        if "latitude" not in own and "longitude" not in own:
            own.update(latitude=str(latitude), longitude=str(longitude))
    return Dataset(
        name=name or folder.name,
        items=items,
        interactions=interactions,
        has_time=has_time,
        users=users,
        presplit=presplit,
        source=str(folder),
    )
