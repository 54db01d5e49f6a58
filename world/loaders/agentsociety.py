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
- `user.json` (optional): `user_id` and scalar attributes (`friends` is dropped).
- `review.json`: `user_id`, `item_id`, `stars` (or `rating`), `text` (or `review_text`) and a
  time, the first of `date` (ISO like Yelp's "2018-07-07 22:09:11", or Goodreads' "Sun Jul 30
  07:44:10 -0700 2017"), `timestamp` (epoch s or ms, Amazon), `date_added`; naive times are
  UTC. No time in any review: file order, `has_time=False`; only some dated: an error.
- Tasks (optional; world/loaders/agentsociety_tasks.py): each fixes its user's split and
  candidate pool; a task's `loc` (other than [-1, -1]) becomes the user's `latitude`/`longitude`
  attributes unless user.json gives them.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from world.data import Dataset, Interaction, Item
from world.errors import DataFormatError
from world.loaders.agentsociety_fields import flat_categories, hours_problem
from world.loaders.agentsociety_json import read_json_records, required_id
from world.loaders.agentsociety_tasks import find_tasks, load_tasks
from world.loaders.text import clean_title

TITLE_FIELDS = ("title", "name", "title_without_series")
TIME_FIELDS = ("date", "timestamp", "date_added")
RATING_FIELDS = ("stars", "rating")
TEXT_FIELDS = ("text", "review_text")
ITEM_USED = {"item_id", *TITLE_FIELDS, "categories", "description", "publication_year"}
MEDIA_FIELDS = {"images", "videos"}
"""Amazon's image and video URL objects: nothing a tool reads, so not kept."""
USER_SKIPPED = {"user_id", "friends"}
DATE_FORMATS = ("%a %b %d %H:%M:%S %z %Y", "%Y/%m/%d %H:%M:%S", "%m/%d/%Y")
MILLISECONDS_ABOVE = 1e11
"""Epoch numbers above this are milliseconds (1e11 seconds is the year 5138)."""


def _scalars(record: dict[str, Any], skipped: set[str]) -> dict[str, str]:
    """Every scalar field not in `skipped`, as text."""
    texts = {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value).strip()
        for key, value in record.items()
        if key not in skipped and value is not None and not isinstance(value, list | dict)
    }
    return {key: text for key, text in texts.items() if text}


def _structured(path: Path, line: int, record: dict[str, Any]) -> dict[str, Any]:
    """Every non-empty list and object field in its own shape (category paths when `categories`
    nests lists); Yelp `hours` checked."""
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
    return kept


def _description(value: Any) -> str | None:
    if isinstance(value, list):
        value = " ".join(str(v).strip() for v in value if isinstance(v, str | int | float))
    return (value.strip() or None) if isinstance(value, str) else None


def load_items(path: Path) -> dict[str, Item]:
    """Read `item.json` into the catalog."""
    items: dict[str, Item] = {}
    for line, record in read_json_records(path):
        item_id = required_id(path, line, record, "item_id")
        if item_id in items:
            raise DataFormatError(path, line, f"duplicate item id {item_id!r}")
        titles = (record.get(f) for f in TITLE_FIELDS)
        title = next((clean_title(str(t)) for t in titles if t is not None and clean_title(str(t))), "")
        attributes = _scalars(record, ITEM_USED)
        if record.get("publication_year") not in (None, "") and "year" not in attributes:
            attributes["year"] = str(record["publication_year"])
        items[item_id] = Item(
            id=item_id,
            title=title or f"item {item_id}",
            categories=flat_categories(record.get("categories")),
            description=_description(record.get("description")),
            attributes=attributes,
            structured=_structured(path, line, record),
        )
    if not items:
        raise DataFormatError(path, None, "no items")
    return items


def load_users(path: Path) -> dict[str, dict[str, str]]:
    """Read an optional `user.json` into attributes by user id."""
    records = read_json_records(path) if path.is_file() else iter(())
    return {required_id(path, n, r, "user_id"): _scalars(r, USER_SKIPPED) for n, r in records}


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


def load_reviews(path: Path, items: dict[str, Item]) -> tuple[list[Interaction], bool]:
    """Read `review.json`; returns the interactions and whether they carry real times."""
    interactions: list[Interaction] = []
    undated: list[int] = []
    for line, record in read_json_records(path):
        user = required_id(path, line, record, "user_id")
        item = required_id(path, line, record, "item_id")
        if item not in items:
            raise DataFormatError(path, line, f"review refers to unknown item {item!r}")
        field = next((f for f in TIME_FIELDS if record.get(f) not in (None, "")), None)
        stamp = parse_time(record[field]) if field else float(len(interactions))
        if stamp is None:
            raise DataFormatError(path, line, f"field {field!r} is not a date: {record[field]!r}")
        if not field:
            undated.append(line)
        text = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str)), "")
        review = Interaction(user, item, stamp, _rating(path, line, record), text.strip() or None)
        interactions.append(review)
    if not interactions:
        raise DataFormatError(path, None, "no reviews")
    if undated and len(undated) < len(interactions):
        fields = ", ".join(repr(f) for f in TIME_FIELDS)
        problem = f"review has no time ({fields}) while others have one"
        raise DataFormatError(path, undated[0], problem)
    return interactions, not undated


def load_agentsociety(folder: Path, name: str | None = None) -> Dataset:
    """Load an AgentSociety / AgentRecBench folder (see the module docstring) into a `Dataset`."""
    items = load_items(folder / "item.json")
    interactions, has_time = load_reviews(folder / "review.json", items)
    users = load_users(folder / "user.json")
    pairs = find_tasks(folder)
    presplit, places = load_tasks(pairs, items, interactions) if pairs else (None, {})
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
