"""Loader 1: a dataset in RecBole's atomic-file format (`<name>.inter`, `.item`, `.user`)."""

from __future__ import annotations

from pathlib import Path

from world.data import Dataset, Interaction, Item
from world.errors import DataFormatError
from world.loaders.atomic_file import parse_float, read_atomic
from world.loaders.text import clean_title

TITLE_FIELDS = ("title", "movie_title", "name", "item_name")
CATEGORY_FIELDS = ("categories", "category", "class", "genre", "genres")
YEAR_FIELDS = ("release_year", "year")
DESCRIPTION_FIELDS = ("description", "desc", "summary")
REVIEW_FIELDS = ("review", "review_text", "reviewText", "text")
"""Columns of a `.inter` file read as the interaction's review text, first present wins."""


def split_categories(raw: str) -> tuple[str, ...]:
    """Split a category field: on ';' or ',' when present, else on whitespace (ml-100k)."""
    separator = ";" if ";" in raw else "," if "," in raw else None
    parts = raw.split(separator) if separator else raw.split()
    return tuple(clean_title(p) for p in parts if clean_title(p))


def first_present(row: dict[str, str], names: tuple[str, ...]) -> str | None:
    """The value of the first of `names` that the row has, if any."""
    for name in names:
        if name in row:
            return row[name]
    return None


def load_items(path: Path) -> dict[str, Item]:
    """Read an atomic `.item` file into the catalog."""
    items: dict[str, Item] = {}
    for line, row in read_atomic(path, required=("item_id",)):
        item_id = row.pop("item_id")
        if item_id in items:
            raise DataFormatError(path, line, f"duplicate item id {item_id!r}")
        title = first_present(row, TITLE_FIELDS)
        categories = first_present(row, CATEGORY_FIELDS)
        year = first_present(row, YEAR_FIELDS)
        used = set(TITLE_FIELDS + CATEGORY_FIELDS + YEAR_FIELDS + DESCRIPTION_FIELDS)
        attributes = {k: v for k, v in row.items() if k not in used and v}
        if year:
            attributes["year"] = year
        items[item_id] = Item(
            id=item_id,
            title=clean_title(title) if title else f"item {item_id}",
            categories=split_categories(categories) if categories else (),
            description=first_present(row, DESCRIPTION_FIELDS) or None,
            attributes=attributes,
        )
    return items


def load_interactions(path: Path, items: dict[str, Item]) -> tuple[list[Interaction], bool]:
    """Read an atomic `.inter` file; returns the interactions and whether it had timestamps."""
    interactions: list[Interaction] = []
    has_time = True
    for line, row in read_atomic(path, required=("user_id", "item_id")):
        item_id = row["item_id"]
        if item_id not in items:
            raise DataFormatError(path, line, f"unknown item id {item_id!r} (not in the .item file)")
        if "timestamp" in row:
            timestamp = parse_float(path, line, "timestamp", row["timestamp"])
        else:
            has_time = False
            timestamp = float(line)
        rating = parse_float(path, line, "rating", row["rating"]) if row.get("rating") else None
        interactions.append(
            Interaction(row["user_id"], item_id, timestamp, rating, first_present(row, REVIEW_FIELDS) or None)
        )
    if not interactions:
        raise DataFormatError(path, None, "no interactions")
    return interactions, has_time


def load_users(path: Path) -> dict[str, dict[str, str]]:
    """Read an optional atomic `.user` file into attributes by user id."""
    users: dict[str, dict[str, str]] = {}
    if path.is_file():
        for _, row in read_atomic(path, required=("user_id",)):
            users[row.pop("user_id")] = row
    return users


def load_recbole_atomic(folder: Path, name: str | None = None) -> Dataset:
    """Load `<folder>/<name>.inter` and `.item` (and `.user` if present) into a `Dataset`."""
    name = name or folder.name
    items = load_items(folder / f"{name}.item")
    interactions, has_time = load_interactions(folder / f"{name}.inter", items)
    return Dataset(
        name=name,
        items=items,
        interactions=interactions,
        has_time=has_time,
        users=load_users(folder / f"{name}.user"),
        source=str(folder),
    )
