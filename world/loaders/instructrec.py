"""Loader 4: InstructRec (iAgent's instruction datasets) as converted by MemRec.

MemRec's converter writes every file with pandas (`to_csv(sep="\\t", index=False)`): a header
of plain column names, then tab-separated rows; a value holding a tab, a newline or a double
quote is wrapped in double quotes, with inner quotes doubled. RecBole-style typed headers
(`user_id:token`) are accepted too (the `:type` suffix is dropped). Files in `folder`:

    <name>.inter        user_id  item_id  rating  timestamp    (rating, timestamp optional)
    <name>.meta         item_id  asin  title  description       (title, description optional;
                                                                 other columns -> attributes)
    <name>.instruction  user_id  instruction  persona           (persona optional; other
                                                                 columns -> user attributes)
    <name>.text         user_id  item_id  review_text           (optional: review texts)

`.meta` ids are the `.inter` item ids (the converter's integer index; `asin` is the original
product id). The converter's timestamps are positions in each user's sequence (1, 2, 3, ...):
when every timestamp is an integer below `POSITION_LIMIT`, `has_time` is False. Empty values
and pandas' renderings of a missing value ("nan", "None") count as missing. Instructions go
to `Dataset.instructions[user]`, personas to `Dataset.users[user]["persona"]`. `<name>`
defaults to the folder's name, else to the stem of the folder's only `.instruction` file.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from world.data import Dataset, Interaction, Item
from world.errors import DataFormatError
from world.loaders.recbole_atomic import (
    CATEGORY_FIELDS,
    DESCRIPTION_FIELDS,
    TITLE_FIELDS,
    YEAR_FIELDS,
    clean_title,
    first_present,
    split_categories,
)

POSITION_LIMIT = 1e8
"""Integer timestamps all below this (March 1973) are sequence positions, not times."""
MISSING = {"", "nan", "NaN", "None", "null"}
FIELD_SIZE_LIMIT = 1 << 26
"""Longest value accepted (64 MiB); the csv module's default of 128 KiB is too small."""


def read_table(path: Path, required: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield `(line, {column: value})` for each row of a tab-separated file with a header.

    Missing values are dropped from the row (see `MISSING`). Raises `DataFormatError` naming
    the file and line for a bad header, a missing required column, a row with the wrong
    number of fields, malformed quoting, or an empty required value.
    """
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    csv.field_size_limit(max(csv.field_size_limit(), FIELD_SIZE_LIMIT))
    with path.open(encoding="utf-8-sig", errors="replace", newline="") as handle:
        reader = csv.reader(handle, delimiter="\t", quotechar='"', strict=True)
        line = 1
        try:
            header = next(reader, None)
            if not header:
                raise DataFormatError(path, 1, "empty file: expected a header line")
            names = [column.partition(":")[0].strip() for column in header]
            if "" in names or len(set(names)) != len(names):
                raise DataFormatError(path, 1, f"bad header {header!r}: empty or repeated column")
            missing = [column for column in required if column not in names]
            if missing:
                raise DataFormatError(path, 1, f"header lacks column(s) {', '.join(missing)}")
            line = reader.line_num + 1
            for values in reader:
                if values and any(v.strip() for v in values):
                    if len(values) != len(names):
                        problem = f"expected {len(names)} tab-separated fields, found {len(values)}"
                        raise DataFormatError(path, line, problem)
                    row = {n: v.strip() for n, v in zip(names, values, strict=True)}
                    row = {n: v for n, v in row.items() if v not in MISSING}
                    empty = [column for column in required if column not in row]
                    if empty:
                        raise DataFormatError(path, line, f"empty field {empty[0]!r}")
                    yield line, row
                line = reader.line_num + 1
        except csv.Error as exc:
            raise DataFormatError(path, line, f"malformed row: {exc}") from None


def _number(path: Path, line: int, row: dict[str, str], column: str) -> float | None:
    """The numeric value of `column` (None when absent)."""
    if column not in row:
        return None
    try:
        return float(row[column])
    except ValueError:
        problem = f"field {column!r} is not a number: {row[column]!r}"
        raise DataFormatError(path, line, problem) from None


def load_meta(path: Path) -> dict[str, Item]:
    """Read `<name>.meta` into the catalog."""
    items: dict[str, Item] = {}
    used = set(TITLE_FIELDS + CATEGORY_FIELDS + YEAR_FIELDS + DESCRIPTION_FIELDS)
    for line, row in read_table(path, required=("item_id",)):
        item_id = row.pop("item_id")
        if item_id in items:
            raise DataFormatError(path, line, f"duplicate item id {item_id!r}")
        title = clean_title(first_present(row, TITLE_FIELDS) or "")
        categories = first_present(row, CATEGORY_FIELDS)
        description = clean_title(first_present(row, DESCRIPTION_FIELDS) or "")
        attributes = {key: value for key, value in row.items() if key not in used}
        if year := first_present(row, YEAR_FIELDS):
            attributes["year"] = year
        items[item_id] = Item(
            id=item_id,
            title=title or f"item {item_id}",
            categories=split_categories(categories) if categories else (),
            description=description or None,
            attributes=attributes,
        )
    if not items:
        raise DataFormatError(path, None, "no items")
    return items


def load_texts(path: Path) -> dict[tuple[str, str], str]:
    """Read an optional `<name>.text`: review text by (user, item)."""
    texts: dict[tuple[str, str], str] = {}
    if path.is_file():
        for _, row in read_table(path, required=("user_id", "item_id")):
            if row.get("review_text"):
                texts[row["user_id"], row["item_id"]] = row["review_text"]
    return texts


def load_inter(
    path: Path, items: dict[str, Item], texts: dict[tuple[str, str], str]
) -> tuple[list[Interaction], bool]:
    """Read `<name>.inter`; returns the interactions and whether the timestamps are times."""
    interactions: list[Interaction] = []
    for line, row in read_table(path, required=("user_id", "item_id")):
        user, item = row["user_id"], row["item_id"]
        if item not in items:
            raise DataFormatError(path, line, f"unknown item id {item!r} (not in the .meta file)")
        stamp = _number(path, line, row, "timestamp")
        if stamp is None:
            stamp = float(len(interactions))
        rating = _number(path, line, row, "rating")
        interactions.append(Interaction(user, item, stamp, rating, texts.get((user, item))))
    if not interactions:
        raise DataFormatError(path, None, "no interactions")
    positions = all(i.timestamp.is_integer() and 0 <= i.timestamp < POSITION_LIMIT for i in interactions)
    return interactions, not positions


def load_instructions(path: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """Read `<name>.instruction`: instructions by user, and user attributes (persona, ...)."""
    instructions: dict[str, str] = {}
    users: dict[str, dict[str, str]] = {}
    for line, row in read_table(path, required=("user_id",)):
        user = row.pop("user_id")
        if user in users:
            raise DataFormatError(path, line, f"duplicate user id {user!r}")
        if "instruction" in row:
            instructions[user] = row.pop("instruction")
        users[user] = row
    if not instructions:
        raise DataFormatError(path, None, "no instructions (column 'instruction' is empty)")
    return instructions, users


def resolve_name(folder: Path, name: str | None) -> str:
    """`name`, else the folder's name, else the stem of the folder's only `.instruction` file."""
    if name:
        return name
    if (folder / f"{folder.name}.inter").is_file():
        return folder.name
    found = sorted(folder.glob("*.instruction"))
    return found[0].stem if len(found) == 1 else folder.name


def load_instructrec(folder: Path, name: str | None = None) -> Dataset:
    """Load the MemRec-converted InstructRec files of `folder` (see the module docstring)."""
    name = resolve_name(folder, name)
    items = load_meta(folder / f"{name}.meta")
    texts = load_texts(folder / f"{name}.text")
    interactions, has_time = load_inter(folder / f"{name}.inter", items, texts)
    instructions, users = load_instructions(folder / f"{name}.instruction")
    return Dataset(
        name=name,
        items=items,
        interactions=interactions,
        has_time=has_time,
        users=users,
        instructions=instructions,
        source=str(folder),
    )
