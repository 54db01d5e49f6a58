"""Fixtures for the ChainRec tests: small datasets written on the fly (an AgentSociety-format book
folder with reviews, ratings, authors and locations; a titles-only, order-only RecBole folder), and
hand-made trajectory rows for the planner-training tests (no environment, no tool runs).

Each toy trajectory task offers three tools. Whether the expert (best) chain is [ItemProfile] or
[LongTermPreference] depends on a task fact the policy sees (history length), so a small policy can
fit every training decision; every other chain scores lower.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from itertools import permutations
from pathlib import Path
from typing import Any

import pytest

# (id, title, author, categories, latitude, longitude, extra attributes)
_BOOKS = [
    ("b1", "Dune", "Frank Herbert", ["Sci-Fi", "Classic"], 32.22, -110.97, {}),
    ("b2", "Dune Messiah", "Frank Herbert", ["Sci-Fi"], 32.23, -110.96, {}),
    ("b3", "Children of Dune", "Frank Herbert", ["Sci-Fi"], 32.25, -110.90, {}),
    ("b4", "Emma", "Jane Austen", ["Romance", "Classic"], 40.71, -74.00, {}),
    ("b5", "Persuasion", "Jane Austen", ["Romance"], 40.72, -74.01, {}),
    ("b6", "Neuromancer", "William Gibson", ["Sci-Fi", "Cyberpunk"], 32.22, -110.95, {}),
    ("b7", "Count Zero", "William Gibson", ["Sci-Fi", "Cyberpunk"], 32.30, -110.80, {"is_open": False}),
    ("b8", "The Hobbit", "J.R.R. Tolkien", ["Fantasy"], 34.05, -118.24, {}),
    ("b9", "Foundation", "Isaac Asimov", ["Sci-Fi"], 32.21, -110.97, {}),
    ("b10", "Pride and Prejudice", "Jane Austen", ["Romance"], None, None, {}),
    ("b11", "The Left Hand of Darkness", "Ursula K. Le Guin", ["Sci-Fi"], None, None, {}),
    ("b12", "Middlemarch", "George Eliot", ["Classic"], None, None, {}),
]
# (user, item, stars, date, text)
_REVIEWS = [
    ("u1", "b1", 5, "2020-01-01 10:00:00", "Epic desert politics and ecology."),
    ("u1", "b6", 4, "2020-01-20 10:00:00", "Sharp and fast cyberpunk."),
    ("u1", "b4", 2, "2020-03-01 10:00:00", "Too slow for me, nothing happens."),
    ("u1", "b5", 1, "2020-03-15 10:00:00", "Dull drawing rooms."),
    ("u1", "b2", 5, "2020-04-01 10:00:00", "A worthy sequel."),
    ("u1", "b3", 5, "2020-05-01 10:00:00", "Loved it."),
    # u2's and u3's first books give the planner's training world (every test and validation
    # interaction removed) a task for each of them: three interactions before the validation one.
    ("u2", "b11", 4, "2018-11-01 10:00:00", "Cold and strange."),
    ("u2", "b3", 4, "2019-06-01 10:00:00", "A darker sequel."),
    ("u2", "b7", 5, "2019-07-01 10:00:00", "Gibson at his best."),
    ("u2", "b8", 4, "2019-08-01 10:00:00", "Charming."),
    ("u2", "b9", 3, "2020-06-01 10:00:00", "Dry."),
    ("u3", "b12", 4, "2018-12-01 10:00:00", "Slow but wise."),
    ("u3", "b1", 3, "2019-01-01 10:00:00", "Long but rewarding, the best world-building I have read."),
    ("u3", "b3", 5, "2019-02-01 10:00:00", "An even stranger and more ambitious continuation of the saga."),
    ("u3", "b10", 4, "2019-03-01 10:00:00", "Witty."),
    ("u3", "b5", 4, "2019-04-01 10:00:00", "Quietly moving."),
    ("u4", "b7", 1, "2020-07-01 10:00:00", "Disappointing."),
    ("u4", "b8", 4, "2020-07-02 10:00:00", "Fun."),
    ("u4", "b10", 5, "2020-07-03 10:00:00", "Perfect."),
]


def _lines(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def _write_agentsociety(folder: Path) -> Path:
    """An AgentSociety-format folder (item.json, user.json, review.json) with every field the
    ChainRec tools use: ratings, review text, dates, authors, locations, opening state."""
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for item_id, title, author, categories, lat, lon, extra in _BOOKS:
        record = {"item_id": item_id, "title": title, "author": author, "categories": categories, **extra}
        if lat is not None:
            record.update(latitude=lat, longitude=lon)
        items.append(record)
    _lines(folder / "item.json", items)
    _lines(folder / "user.json", [{"user_id": u, "name": u.upper()} for u in ("u1", "u2", "u3", "u4")])
    reviews = [{"user_id": u, "item_id": i, "stars": s, "date": d, "text": t} for u, i, s, d, t in _REVIEWS]
    _lines(folder / "review.json", reviews)
    return folder


def _write_titles_only(folder: Path, name: str = "bare") -> Path:
    """A RecBole atomic folder with titles only (no categories, years, ratings or timestamps)."""
    folder.mkdir(parents=True, exist_ok=True)
    titles = ["Red Kite", "Blue Heron", "Green Finch", "Grey Owl", "White Swan", "Black Swift"]
    items = ["item_id:token\ttitle:token_seq", *(f"t{n}\t{title}" for n, title in enumerate(titles, 1))]
    (folder / f"{name}.item").write_text("\n".join(items) + "\n")
    events = {"a": ["t1", "t2", "t3", "t4"], "b": ["t2", "t5", "t6"], "c": ["t3", "t1", "t6", "t2"]}
    inter = ["user_id:token\titem_id:token", *(f"{u}\t{i}" for u, items_ in events.items() for i in items_)]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


_TOOLS = ["LongTermPreference", "ItemSemantic", "ItemProfile"]
_DOMAIN = {
    "ratings": True,
    "reviews": False,
    "categories": True,
    "timestamps": True,
    "authors": False,
    "locations": False,
}


def _entry(tool: str, user: str) -> dict[str, Any]:
    return {
        "step": 0,
        "tool": tool,
        "facets": [],
        "confidence": 0.5,
        "summary": f"{tool} evidence for user {user}",
        "items": [],
        "source": "heuristic",
        "stats": {},
        "evidence": [],
    }


def _toy_row(number: int) -> dict[str, Any]:
    """Task `number`: short history (odd) -> ItemProfile alone is best; long (even) -> LongTerm."""
    user = f"u{number}"
    short = number % 2 == 1
    best = "2" if short else "0"
    chains = []
    for k in (1, 2, 3):
        for chain in permutations(range(3), k):
            code = ".".join(map(str, chain))
            value = 0.9 if code == best else round(0.2 + 0.1 * (number % 3) - 0.01 * k, 4)
            chains.append([code, code, value])
    return {
        "method": "chainrec_trajectories",
        "user_id": user,
        "task": {"user_id": user, "target": "t", "candidates": ["t", "n1", "n2"], "scenario": "classic"},
        "facts": {
            "history_items": 2 if short else 300,
            "days_since_last": 3.0,
            "has_timestamps": True,
            "candidates_log_pop_mean": 2.0,
            "candidates_log_pop_std": 0.5,
            "candidates_log_pop_max": 3.0,
            "candidates_cold_fraction": 0.1,
            "domain": _DOMAIN,
            "scenario": "classic",
        },
        "tools": _TOOLS,
        "tool_outputs": {tool: _entry(tool, user) for tool in _TOOLS},
        "rankings": {},
        "chains": chains,
        "enumerated": True,
    }


def _toy_rows(count: int = 12) -> list[dict[str, Any]]:
    """`count` toy tasks, alternating short and long histories."""
    return [_toy_row(n) for n in range(count)]


@pytest.fixture
def books(tmp_path: Path) -> str:
    """The AgentSociety-format book folder, written to `tmp_path / "books"`: its path."""
    return str(_write_agentsociety(tmp_path / "books"))


@pytest.fixture
def u1_candidates() -> list[str]:
    """Candidates for u1 in `books`: u1's held-out target b3 (2020-05-01), then books u1 never read."""
    return ["b3", "b7", "b8", "b9", "b10"]


@pytest.fixture
def titles_only_catalog(tmp_path: Path) -> str:
    """The titles-only, order-only RecBole folder, written to `tmp_path / "bare"` (dataset name
    `bare`; users a, b, c; items t1..t6): its path."""
    return str(_write_titles_only(tmp_path / "bare"))


@pytest.fixture(scope="session")
def toy_trajectory_row() -> Callable[[int], dict[str, Any]]:
    """`row(number)`: toy trajectory task `number`; odd numbers have a short history (ItemProfile alone
    is best), even numbers a long one (LongTermPreference alone is best)."""
    return _toy_row


@pytest.fixture(scope="session")
def toy_trajectory_rows() -> Callable[..., list[dict[str, Any]]]:
    """`rows(count=12)`: `count` toy trajectory tasks, alternating short and long histories."""
    return _toy_rows
