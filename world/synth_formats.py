"""Writing a generated catalog (`world.synth`) in the public formats the papers' data comes in.

- `write_amazon2023`: `<Category>.jsonl` reviews + `meta_<Category>.jsonl` (Amazon Reviews 2023).
- `write_amazon2018`: `<Category>.json` reviews + `meta_<Category>.json` (Amazon 2018 layout).
- `write_mind`: `behaviors.tsv` + `news.tsv` (MIND): each user's last `MIND_CLICKS` items are
  clicks in impressions of their own (with `MIND_NEGATIVES` shown-but-skipped news each), the
  earlier ones the history column.
- `write_instructrec`: `<name>.inter`, `.meta`, `.instruction` as MemRec's converter writes
  InstructRec (tab-separated, a plain header, integer ids, positions as timestamps, rating 5.0;
  items with a title and a description only, as InstructRec Books has; one instruction and persona
  per user).

Field names and value shapes follow the published formats; every value (ids, titles, review texts,
prices, dates) is generated here. Reviews and metadata are written line by line, so a category of
millions of reviews needs no more memory than the generated arrays. Missing optional fields are
generated on purpose: some reviews have no text, some items no description or price. A `gzip`
argument writes `.gz` files.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import numpy as np

from world.synth import SynthData

OPINIONS = (
    "Exactly what I hoped for", "Solid, though not perfect", "Better than expected", "A bit of a letdown",
    "Would buy again", "Does the job", "Great value", "Not for me",
)  # fmt: skip
DETAILS = (
    "The {category} side of it really shows.", "Arrived quickly and well packed.",
    "Sound and build feel above the price.", "I keep coming back to it on weekends.",
    "The second half is stronger than the first.", "Gave one to a friend as a gift.",
)  # fmt: skip
RATING_SHARES = (0.05, 0.06, 0.14, 0.3, 0.45)
"""Share of 1..5-star ratings."""
MIND_CLICKS = 4
"""Clicks of each user written as impressions (the rest of the sequence is the history column)."""
MIND_NEGATIVES = (19, 36)
"""Range of skipped news shown in each impression."""
MIND_START = datetime(2019, 11, 9, tzinfo=UTC).timestamp()


def _open(path: Path, gz: bool) -> IO[str]:
    if gz:  # mtime 0: the same data gives the same bytes
        raw = gzip.GzipFile(path.with_name(path.name + ".gz"), "wb", mtime=0)
        return io.TextIOWrapper(raw, encoding="utf-8")
    return path.open("w", encoding="utf-8")


def _users(data: SynthData) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(user index, item indexes, times) of every user, oldest first."""
    offsets = data.offsets.tolist()
    times = data.times if data.times is not None else np.arange(len(data.sequence), dtype=np.int64)
    for user in range(len(offsets) - 1):
        span = slice(offsets[user], offsets[user + 1])
        yield user, data.sequence[span], times[span]


def _review_texts(rng: np.random.Generator, data: SynthData, items: np.ndarray) -> list[tuple[str, str]]:
    """(headline, body) per review; about one in ten has no body."""
    opinions = rng.integers(len(OPINIONS), size=len(items)).tolist()
    details = rng.integers(len(DETAILS), size=(len(items), 2)).tolist()
    empty = (rng.random(len(items)) < 0.1).tolist()
    texts = []
    for k, item in enumerate(items.tolist()):
        category = data.category_names[int(data.item_category[item])]
        body = "" if empty[k] else " ".join(DETAILS[d].format(category=category) for d in details[k])
        texts.append((OPINIONS[opinions[k]], f"{data.titles[item]}: {body}" if body else ""))
    return texts


def _reviews(rng: np.random.Generator, data: SynthData) -> Iterator[tuple[int, int, int, int, str, str]]:
    """(user, item, time, rating, headline, body) of every interaction, user by user, oldest first;
    each user's ratings and texts are drawn from `rng` before its rows are yielded."""
    for user, items, times in _users(data):
        ratings = rng.choice(5, size=len(items), p=RATING_SHARES) + 1
        texts = _review_texts(rng, data, items)
        rows = zip(items.tolist(), times.tolist(), ratings.tolist(), texts, strict=True)
        for item, stamp, rating, (headline, body) in rows:
            yield user, item, stamp, rating, headline, body


def write_amazon2023(data: SynthData, folder: Path, category: str, gz: bool = False) -> list[Path]:
    """`<category>.jsonl` and `meta_<category>.jsonl` (module docstring); returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(data.spec.seed + 2023)
    reviews = folder / f"{category}.jsonl"
    with _open(reviews, gz) as out:
        for user, item, stamp, rating, headline, body in _reviews(rng, data):
            record = {
                "rating": float(rating), "title": headline, "text": body, "images": [],
                "asin": f"B0{item:08X}V", "parent_asin": f"B0{item:08X}",
                "user_id": f"AG{user:010X}QZK{user % 97:02d}", "timestamp": int(stamp) * 1000,
                "helpful_vote": int(rng.integers(0, 4)), "verified_purchase": bool(rating > 2),
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")
    meta = folder / f"meta_{category}.jsonl"
    with _open(meta, gz) as out:
        for item, title in enumerate(data.titles):
            genre = data.category_names[int(data.item_category[item])]
            year = 1995 + item % 25
            record = {
                "main_category": category.replace("_", " "), "title": title,
                "average_rating": 4.2, "rating_number": 10 + item % 50,
                "features": [f"{genre} edition", "Remastered"] if item % 3 else [],
                "description": [f"A {genre.lower()} release, {title}."] if item % 5 else [],
                "price": round(5 + (item % 40) * 0.5, 2) if item % 4 else None,
                "images": [], "videos": [], "store": f"{title.split()[0]} Records",
                "categories": [category.replace("_", " "), genre],
                "details": {"Date First Available": f"March {1 + item % 28}, {year}"},
                "parent_asin": f"B0{item:08X}", "bought_together": None,
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")
    return [reviews, meta]


def write_amazon2018(data: SynthData, folder: Path, category: str, gz: bool = False) -> list[Path]:
    """`<category>.json` and `meta_<category>.json` in the 2018 layout; returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(data.spec.seed + 2018)
    reviews = folder / f"{category}.json"
    with _open(reviews, gz) as out:
        for user, item, stamp, rating, headline, body in _reviews(rng, data):
            when = datetime.fromtimestamp(int(stamp), UTC)
            record = {
                "overall": float(rating), "verified": True, "reviewTime": when.strftime("%m %d, %Y"),
                "reviewerID": f"A{user:012X}", "asin": f"{item:010d}", "reviewerName": f"Listener {user}",
                "summary": headline, "unixReviewTime": int(stamp),
            }  # fmt: skip
            if body:
                record["reviewText"] = body
            out.write(json.dumps(record) + "\n")
    meta = folder / f"meta_{category}.json"
    with _open(meta, gz) as out:
        for item, title in enumerate(data.titles):
            genre = data.category_names[int(data.item_category[item])]
            record = {
                "category": [category.replace("_", " "), genre], "tech1": "",
                "description": [f"A {genre.lower()} album: {title}."] if item % 5 else [],
                "fit": "", "title": title, "also_buy": [], "image": [], "tech2": "",
                "brand": f"{title.split()[0]} Records", "feature": [], "rank": f"{1000 + item:,} in CDs",
                "also_view": [], "main_cat": "Music", "similar_item": "",
                "date": f"June {1 + item % 28}, {1990 + item % 30}", "price": f"${5 + item % 20}.99",
                "asin": f"{item:010d}",
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")
    return [reviews, meta]


def _mind_time(stamp: float) -> str:
    moment = datetime.fromtimestamp(stamp, UTC)
    return f"{moment.month}/{moment.day}/{moment.year} {moment.strftime('%I').lstrip('0')}:{moment:%M:%S %p}"


def write_mind(data: SynthData, folder: Path) -> list[Path]:
    """`behaviors.tsv` and `news.tsv` (module docstring); returns the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(data.spec.seed + 1911)
    n_items = len(data.titles)
    news = folder / "news.tsv"
    with news.open("w", encoding="utf-8") as out:
        for item, title in enumerate(data.titles):
            genre = data.category_names[int(data.item_category[item])]
            abstract = f"What {title} means for {genre.lower()} fans this week." if item % 6 else ""
            url = f"https://example.invalid/news/N{item + 1}"
            fields = (f"N{item + 1}", genre.lower(), f"{genre.lower()}news", title, abstract, url, "[]", "[]")
            out.write("\t".join(fields) + "\n")
    behaviors = folder / "behaviors.tsv"
    impression = 0
    with behaviors.open("w", encoding="utf-8") as out:
        for user, items, _ in _users(data):
            clicks = min(MIND_CLICKS, len(items) - 1)
            history = " ".join(f"N{i + 1}" for i in items[: len(items) - clicks].tolist())
            taken = set(items.tolist())
            start = MIND_START + float(rng.integers(0, 3 * 86_400))
            for k, item in enumerate(items[len(items) - clicks :].tolist()):
                drawn = rng.integers(n_items, size=MIND_NEGATIVES[1] * 2).tolist()
                shown = np.array(sorted(set(drawn) - taken))
                size = min(len(shown), int(rng.integers(*MIND_NEGATIVES)))
                negatives = rng.choice(shown, size=size, replace=False).tolist()
                labels = [f"N{i + 1}-0" for i in negatives]
                labels.insert(int(rng.integers(len(labels) + 1)), f"N{item + 1}-1")
                impression += 1
                stamp = _mind_time(start + k * 5400 + float(rng.integers(0, 600)))
                out.write(f"{impression}\tU{user + 1}\t{stamp}\t{history}\t{' '.join(labels)}\n")
    return [behaviors, news]


def write_instructrec(data: SynthData, folder: Path, name: str) -> list[Path]:
    """`<name>.inter`, `<name>.meta` and `<name>.instruction` (module docstring); returns the paths.
    Each instruction asks for the genre of the user's last item, as InstructRec's instructions
    describe what the user wants next."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.{suffix}" for suffix in ("inter", "meta", "instruction")]
    genres = [data.category_names[int(c)].lower() for c in data.item_category]
    with paths[0].open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["user_id", "item_id", "rating", "timestamp"])
        for user, items, _ in _users(data):
            out.writerows([user, int(item), 5.0, position] for position, item in enumerate(items, 1))
    with paths[1].open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["item_id", "asin", "title", "description"])
        for item, title in enumerate(data.titles):
            about = f"A {genres[item]} story: {title}, by {title.split()[0]} and others." if item % 6 else ""
            out.writerow([item, f"{item:010d}", title, about])
    with paths[2].open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle, delimiter="\t", lineterminator="\n")
        out.writerow(["user_id", "instruction", "persona"])
        for user, items, _ in _users(data):
            wish = f"I'd like something in {genres[int(items[-1])]}, ideally not too long."
            persona = f"A reader who mostly picks {genres[int(items[0])]}." if user % 4 else "nan"
            out.writerow([user, wish, persona])
    return paths
