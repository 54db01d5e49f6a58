"""Small datasets for the ChainRec tests, written on the fly: an AgentSociety-format folder with
reviews, ratings, authors and locations, and a titles-only, order-only RecBole folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# (id, title, author, categories, latitude, longitude, extra attributes)
BOOKS = [
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
]
# (user, item, stars, date, text)
REVIEWS = [
    ("u1", "b1", 5, "2020-01-01 10:00:00", "Epic desert politics and ecology."),
    ("u1", "b6", 4, "2020-01-20 10:00:00", "Sharp and fast cyberpunk."),
    ("u1", "b4", 2, "2020-03-01 10:00:00", "Too slow for me, nothing happens."),
    ("u1", "b5", 1, "2020-03-15 10:00:00", "Dull drawing rooms."),
    ("u1", "b2", 5, "2020-04-01 10:00:00", "A worthy sequel."),
    ("u1", "b3", 5, "2020-05-01 10:00:00", "Loved it."),
    ("u2", "b3", 4, "2019-06-01 10:00:00", "A darker sequel."),
    ("u2", "b7", 5, "2019-07-01 10:00:00", "Gibson at his best."),
    ("u2", "b8", 4, "2019-08-01 10:00:00", "Charming."),
    ("u2", "b9", 3, "2020-06-01 10:00:00", "Dry."),
    ("u3", "b1", 3, "2019-01-01 10:00:00", "Long but rewarding, the best world-building I have read."),
    ("u3", "b3", 5, "2019-02-01 10:00:00", "An even stranger and more ambitious continuation of the saga."),
    ("u3", "b10", 4, "2019-03-01 10:00:00", "Witty."),
    ("u3", "b5", 4, "2019-04-01 10:00:00", "Quietly moving."),
    ("u4", "b7", 1, "2020-07-01 10:00:00", "Disappointing."),
    ("u4", "b8", 4, "2020-07-02 10:00:00", "Fun."),
    ("u4", "b10", 5, "2020-07-03 10:00:00", "Perfect."),
]
U1_CANDIDATES = ["b3", "b7", "b8", "b9", "b10"]
"""u1's held-out target is b3 (2020-05-01); the others are books u1 never read."""


def _lines(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def write_agentsociety(folder: Path) -> Path:
    """An AgentSociety-format folder (item.json, user.json, review.json) with every field the
    ChainRec tools use: ratings, review text, dates, authors, locations, opening state."""
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for item_id, title, author, categories, lat, lon, extra in BOOKS:
        record = {"item_id": item_id, "title": title, "author": author, "categories": categories, **extra}
        if lat is not None:
            record.update(latitude=lat, longitude=lon)
        items.append(record)
    _lines(folder / "item.json", items)
    _lines(folder / "user.json", [{"user_id": u, "name": u.upper()} for u in ("u1", "u2", "u3", "u4")])
    reviews = [{"user_id": u, "item_id": i, "stars": s, "date": d, "text": t} for u, i, s, d, t in REVIEWS]
    _lines(folder / "review.json", reviews)
    return folder


def write_titles_only(folder: Path, name: str = "bare") -> Path:
    """A RecBole atomic folder with titles only (no categories, years, ratings or timestamps)."""
    folder.mkdir(parents=True, exist_ok=True)
    titles = ["Red Kite", "Blue Heron", "Green Finch", "Grey Owl", "White Swan", "Black Swift"]
    items = ["item_id:token\ttitle:token_seq", *(f"t{n}\t{title}" for n, title in enumerate(titles, 1))]
    (folder / f"{name}.item").write_text("\n".join(items) + "\n")
    events = {"a": ["t1", "t2", "t3", "t4"], "b": ["t2", "t5", "t6"], "c": ["t3", "t1", "t6", "t2"]}
    inter = ["user_id:token\titem_id:token", *(f"{u}\t{i}" for u, items_ in events.items() for i in items_)]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


def last_values(compiled: Any, request: dict, context: Any) -> dict[str, Any]:
    """The graph's final state (every channel, not only the output schema)."""
    final: dict[str, Any] = {}
    for values in compiled.stream(request, context=context, stream_mode="values"):
        final = values
    return final
