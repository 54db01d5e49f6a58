"""Loader: an Amazon review category as the McAuley Lab distributes it (2023, or 2014/2018).

`--dataset` names the reviews file, or a folder holding one category:

    Amazon Reviews 2023     <Category>.jsonl[.gz]           meta_<Category>.jsonl[.gz]
    Amazon 2018             <Category>[_5].json[.gz]        meta_<Category>.json[.gz]
    Amazon 2014             reviews_<Category>[_5].json.gz  meta_<Category>.json.gz

The metadata file is optional (items are then titled by id); its name is `meta_` + the reviews
file's category, with the 2014 `reviews_` prefix and the `_5` (5-core) suffix dropped. Reviews are
streamed first (`amazon_reviews`), then the metadata keeping only the reviewed items
(`amazon_meta`), so memory follows the reviews kept, not the size of either file. Items the
metadata lacks get the title "item <id>".
"""

from __future__ import annotations

import re
from pathlib import Path

from world.data import Dataset, Item
from world.errors import DatasetNotFoundError
from world.loaders.amazon_meta import read_meta
from world.loaders.amazon_reviews import read_reviews

SUFFIXES = (".jsonl.gz", ".jsonl", ".json.gz", ".json")
"""File endings of the review and metadata files."""
NOT_REVIEWS = re.compile(r"^(meta_|item\.|user\.|review\.|task_|groundtruth_)|\.synth\.json$")
"""JSON files in a folder that are not an Amazon reviews file (metadata, AgentSociety, tasks)."""


def category_of(path: Path) -> str | None:
    """The file name without its JSON ending (None when it has none of `SUFFIXES`)."""
    return next((path.name[: -len(s)] for s in SUFFIXES if path.name.endswith(s)), None)


def review_files(folder: Path) -> list[Path]:
    """The files of `folder` that look like Amazon reviews files, by name."""
    files = [p for p in sorted(folder.iterdir()) if p.is_file() and category_of(p)]
    return [p for p in files if not NOT_REVIEWS.search(p.name)]


def meta_file(reviews: Path) -> Path | None:
    """The metadata file beside `reviews` (module docstring), if there is one."""
    category = category_of(reviews) or reviews.stem
    names = [category, category.removeprefix("reviews_")]
    names.append(re.sub(r"_5$", "", names[-1]))
    for name in dict.fromkeys(names):
        for suffix in SUFFIXES:
            candidate = reviews.with_name(f"meta_{name}{suffix}")
            if candidate.is_file():
                return candidate
    return None


def find_reviews(path: Path) -> Path | None:
    """The reviews file `path` names (the file, or a folder's only reviews file); None when there
    is none; `DatasetNotFoundError` when the path is a metadata file or a folder of several."""
    if path.is_file():
        if path.name.startswith("meta_"):
            raise DatasetNotFoundError(
                f"{path} is an Amazon metadata file: pass its reviews file (or their folder)"
            )
        return path if category_of(path) else None
    if not path.is_dir():
        return None
    found = review_files(path)
    paired = [p for p in found if meta_file(p)]
    chosen = paired if len(found) > 1 and paired else found
    if len(chosen) > 1:
        names = ", ".join(p.name for p in chosen)
        raise DatasetNotFoundError(f"{path} holds several Amazon review files ({names}); pass one of them")
    return chosen[0] if chosen else None


def load_amazon(reviews: Path) -> Dataset:
    """Load one category from its reviews file and the metadata beside it (module docstring)."""
    interactions, _ = read_reviews(reviews)
    wanted = {event.item_id for event in interactions}
    meta = meta_file(reviews)
    items = read_meta(meta, wanted) if meta else {}
    for item_id in wanted.difference(items):
        items[item_id] = Item(id=item_id, title=f"item {item_id}")
    name = (category_of(reviews) or reviews.stem).removeprefix("reviews_")
    return Dataset(name=name, items=items, interactions=interactions, source=str(reviews))
