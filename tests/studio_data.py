"""A small slice of ml-100k for the dev-server tests: every graph runs on it from a cold cache in
seconds (the full catalog's MiniLM embeddings take a minute or more), and it keeps every user and
item id the registry's Studio examples name, with their real titles, genres and timestamps."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from world.recbole_wheel import ml100k_dir

NAME = "ml-100k-studio"
"""The slice's RecBole atomic file stem (and dataset name)."""
OTHER_REQUEST = {"user_id": "2", "candidates": ["7", "9", "11", "12", "22"]}
"""A request sharing no candidate with the registry's examples (another user, other items): its item
vectors are not on disk after the examples ran, so a node must embed them off the event loop."""


def _rows(path: Path) -> tuple[str, list[list[str]]]:
    header, *lines = path.read_text(encoding="utf-8").splitlines()
    return header, [line.split("\t") for line in lines if line.strip()]


def ids_in(examples: Iterable[dict]) -> tuple[set[str], set[str]]:
    """The user and item ids the examples name."""
    users, items = set(), set()
    for example in examples:
        users.add(str(example["user_id"]))
        items.update(str(i) for i in example.get("candidates") or [])
        if "item_id" in example:
            items.add(str(example["item_id"]))
    return users, items


def write_slice(folder: Path, examples: Iterable[dict], users: int = 30, items: int = 120) -> Path:
    """Write the first `users` users' interactions with the `items` most popular items (plus every
    id the examples name) as RecBole atomic files in `folder`; returns the dataset's path."""
    source = ml100k_dir()
    need_users, need_items = ids_in(examples)
    inter_header, inters = _rows(source / "ml-100k.inter")
    popular = [item for item, _ in Counter(row[1] for row in inters).most_common(items)]
    kept_items = set(popular) | need_items
    kept_users = {str(u) for u in range(1, users + 1)} | need_users
    kept = ["\t".join(row) for row in inters if row[0] in kept_users and row[1] in kept_items]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{NAME}.inter").write_text("\n".join([inter_header, *kept]) + "\n", encoding="utf-8")
    for suffix, key in (("item", kept_items), ("user", kept_users)):
        header, rows = _rows(source / f"ml-100k.{suffix}")
        lines = [header, *("\t".join(r) for r in rows if r[0] in key)]
        (folder / f"{NAME}.{suffix}").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
