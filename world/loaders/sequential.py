"""Loader 3: the sequential history/target layout with pre-sampled candidates.

Files (LLMRank / AgentCF layout): `<name>.test.inter` with
`user_id:token  item_id_list:token_seq  item_id:token` (history, then the test
target), an item file with `item_id:token  title:token_seq ...`, and optionally
`<name>.random` — one line per user: the user id, then pre-sampled item ids.
The last history item is the validation (warm-up) target. There are no
timestamps, so interactions get their position and `has_time=False`.
"""

from __future__ import annotations

from pathlib import Path

from world.data import Dataset, Interaction, PresplitUser
from world.errors import DataFormatError
from world.loaders.atomic_file import read_atomic
from world.loaders.recbole_atomic import load_items


def read_random_candidates(path: Path, known_items: set[str]) -> dict[str, tuple[str, ...]]:
    """Read a `.random` file: whitespace-separated user id followed by item ids."""
    pools: dict[str, tuple[str, ...]] = {}
    if not path.is_file():
        return pools
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            tokens = line.split()
            if not tokens:
                continue
            if len(tokens) < 2:
                raise DataFormatError(path, number, "a user id with no candidate items")
            unknown = [t for t in tokens[1:] if t not in known_items]
            if unknown:
                raise DataFormatError(path, number, f"unknown item id {unknown[0]!r}")
            pools[tokens[0]] = tuple(tokens[1:])
    return pools


def find_item_file(folder: Path, name: str) -> Path:
    """`<name>.item` if present, else the folder's only `.item` file."""
    own = folder / f"{name}.item"
    if own.is_file():
        return own
    found = sorted(folder.glob("*.item"))
    if len(found) != 1:
        raise DataFormatError(folder, None, f"expected {name}.item or exactly one .item file")
    return found[0]


def load_sequential(folder: Path, name: str) -> Dataset:
    """Load the `<name>.test.inter` layout (plus items and `.random`) from `folder`."""
    items = load_items(find_item_file(folder, name))
    test_path = folder / f"{name}.test.inter"
    pools = read_random_candidates(folder / f"{name}.random", set(items))
    presplit: dict[str, PresplitUser] = {}
    interactions: list[Interaction] = []
    required = ("user_id", "item_id_list", "item_id")
    for line, row in read_atomic(test_path, required=required):
        user, target = row["user_id"], row["item_id"]
        history = row["item_id_list"].split()
        for item_id in [*history, target]:
            if item_id not in items:
                raise DataFormatError(test_path, line, f"unknown item id {item_id!r}")
        if user in presplit:
            raise DataFormatError(test_path, line, f"user {user!r} appears twice")
        if not history:
            raise DataFormatError(test_path, line, f"user {user!r} has an empty history")
        presplit[user] = PresplitUser(
            history=tuple(history[:-1]),
            valid=history[-1],
            target=target,
            candidates=pools.get(user),
        )
        interactions.extend(
            Interaction(user, item_id, float(position)) for position, item_id in enumerate([*history, target])
        )
    if not presplit:
        raise DataFormatError(test_path, None, "no users")
    return Dataset(
        name=name,
        items=items,
        interactions=interactions,
        has_time=False,
        presplit=presplit,
        source=str(folder),
    )
