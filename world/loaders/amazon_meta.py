"""Streaming an Amazon metadata file into the catalog, keeping only the items the reviews name.

One record a line (JSON, or a Python dict literal in the 2014 files: `amazon_records`). Fields read:
- id: `parent_asin` (2023), else `asin` (2014/2018); a repeated id keeps its first record (the 2018
  files repeat some products); a record without either is skipped.
- title: `title`.
- categories: `categories` (2023: a list of names; 2014: a list of category paths, the first path
  read), else `category` (2018: a list), else `main_category` / `main_cat` alone.
- description: `description` (a string, or a list of paragraphs joined), else the features;
  cut to `DESCRIPTION_CHARS`.
- attributes: `brand` (2014/2018) or `store` (2023, the brand's storefront, read as the brand),
  `price`, `main_category`/`main_cat`, `features`/`feature` (joined, cut to `FEATURE_CHARS`), and
  `year`, the first year in `details` "Date First Available" / "Release date" / "Publication date"
  (2023) or `date` (2018). Images, videos, rankings, "also bought" lists and the other `details`
  are dropped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from world.data import Item
from world.loaders.amazon_records import read_records, text_of
from world.loaders.text import clean_title

DESCRIPTION_CHARS = 1500
"""Longest description kept (cut at a word boundary)."""
FEATURE_CHARS = 400
"""Longest features attribute kept."""
ID_FIELDS = ("parent_asin", "asin")
DATE_DETAILS = ("Date First Available", "Release date", "Publication date", "Original Release Date")
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")


def _categories(record: dict[str, Any]) -> tuple[str, ...]:
    raw = record.get("categories") or record.get("category") or []
    if isinstance(raw, list) and raw and isinstance(raw[0], list):
        raw = raw[0]  # 2014: category paths; the first one
    if isinstance(raw, str):
        raw = [raw]
    raw = raw if isinstance(raw, list) else []
    names = [clean_title(str(name)) for name in raw if isinstance(name, str | int)]
    if not any(names):
        main = record.get("main_category") or record.get("main_cat")
        names = [clean_title(main)] if isinstance(main, str) else []
    return tuple(dict.fromkeys(n for n in names if n))


def _year(record: dict[str, Any]) -> str | None:
    details = record.get("details")
    texts = [details.get(key) for key in DATE_DETAILS] if isinstance(details, dict) else []
    texts.append(record.get("date"))
    for text in texts:
        if isinstance(text, str) and (match := _YEAR.search(text)):
            return match.group(1)
    return None


def _attributes(record: dict[str, Any]) -> dict[str, str]:
    found = {
        "brand": record.get("brand") or record.get("store"),
        "price": record.get("price"),
        "main_category": record.get("main_category") or record.get("main_cat"),
        "features": text_of(record.get("features") or record.get("feature"), FEATURE_CHARS),
        "year": _year(record),
    }
    scalars = {key: value for key, value in found.items() if isinstance(value, str | int | float)}
    texts = {key: clean_title(str(value)) for key, value in scalars.items()}
    return {key: text for key, text in texts.items() if text and text not in ("None", "null")}


def item_from_record(item_id: str, record: dict[str, Any]) -> Item:
    """The catalog item one metadata record describes."""
    title = clean_title(str(record.get("title") or ""))
    description = text_of(record.get("description"), DESCRIPTION_CHARS) or text_of(
        record.get("features") or record.get("feature"), DESCRIPTION_CHARS
    )
    return Item(
        id=item_id,
        title=title or f"item {item_id}",
        categories=_categories(record),
        description=clean_title(description) or None,
        attributes=_attributes(record),
    )


def read_meta(path: Path, wanted: set[str]) -> dict[str, Item]:
    """The items of `wanted` that `path` describes (others are skipped as they stream by)."""
    items: dict[str, Item] = {}
    for _, record in read_records(path):
        raw = next((record[f] for f in ID_FIELDS if isinstance(record.get(f), str | int)), None)
        item_id = str(raw).strip() if raw is not None else ""
        if item_id in wanted and item_id not in items:
            item_id = sys.intern(item_id)  # the very string the interactions hold
            items[item_id] = item_from_record(item_id, record)
    return items
