"""Fixtures for the AMEM4Rec tests: a small movie catalog written on the fly as RecBole atomic files
(with or without categories), and its users' histories."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path

import pytest

from world.database import DATABASE_URL_ENV

_ITEMS = [
    ("1", "Moonlight Harbor", "1994", "Drama Romance"),
    ("2", "Iron Comet", "1986", "Action Sci-Fi"),
    ("3", "Laughing Gas", "1991", "Comedy"),
    ("4", "The Quiet Orchard", "1997", "Drama"),
    ("5", "Starfall Legion", "1995", "Action Sci-Fi War"),
    ("6", "Paper Hearts", "1999", "Comedy Romance"),
    ("7", "Dust and Thunder", "1968", "Western"),
    ("8", "Night Shift Blues", "1993", "Drama Crime"),
    ("9", "Galaxy Drifters", "1980", "Adventure Sci-Fi"),
    ("10", "Holiday Mixup", "1996", "Comedy"),
    ("11", "Silent River", "1992", "Drama Thriller"),
    ("12", "Robot Rebellion", "1998", "Action Sci-Fi"),
]
# user -> items in time order; the last two are the validation and test interactions.
_HISTORIES = {
    "a": ["1", "4", "8", "11", "6", "4", "2", "9"],
    "b": ["2", "5", "12", "9", "2", "3", "1", "7"],
    "c": ["3", "10", "6", "3", "1", "4", "12", "5"],
    "d": ["7", "2", "5", "9", "12", "8", "11", "10"],
    "e": ["6", "1", "11", "4", "3", "10", "7", "2"],
    "f": ["8", "11", "1", "4", "5", "2", "6", "3"],
}


def _write_dataset(folder: Path, name: str = "amem", categories: bool = True) -> Path:
    """Write the dataset (with or without categories: titles-only) and return its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    if categories:
        header = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"
        rows = ["\t".join(row) for row in _ITEMS]
    else:
        header = "item_id:token\tmovie_title:token_seq"
        rows = [f"{item}\t{title}" for item, title, _, _ in _ITEMS]
    (folder / f"{name}.item").write_text("\n".join([header, *rows]) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, items in _HISTORIES.items():
        inter += [f"{user}\t{item}\t4\t{100 * (n + 1)}" for n, item in enumerate(items)]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


@pytest.fixture
def amem_histories() -> dict[str, list[str]]:
    """User -> the items of the AMEM4Rec catalog in time order (six users, eight items each); the last
    two are the validation and test interactions."""
    return copy.deepcopy(_HISTORIES)


@pytest.fixture(scope="session")
def write_amem_dataset() -> Callable[..., Path]:
    """`write(folder, name="amem", categories=True) -> folder`: writes the twelve-item catalog and the
    `amem_histories` interactions (rated 4, timestamped) as `<name>.item` / `<name>.inter`;
    `categories=False` writes titles only (no years, no categories)."""
    return _write_dataset


@pytest.fixture
def amem_dataset(tmp_path: Path) -> str:
    """The catalog with categories, written to `tmp_path / "data"` (dataset name `amem`): its path."""
    return str(_write_dataset(tmp_path / "data"))


@pytest.fixture(params=["sqlite", "postgres"])
def pool_backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Where the test's AMEM4Rec pools live: "sqlite" (folders, the default) or "postgres" (a fresh
    database of the session's server, named by RECGRAPH_DATABASE_URL)."""
    if request.param == "postgres":
        monkeypatch.setenv(DATABASE_URL_ENV, request.getfixturevalue("postgres_url"))
    else:
        monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    return request.param
