"""Loader: MIND (Microsoft News) as distributed, `behaviors.tsv` + `news.tsv`.

`--dataset` names a folder holding both files (e.g. `MINDsmall_train/`), the `behaviors.tsv` file
itself, or a folder whose subfolders each hold both (e.g. `MINDsmall_train/` and `MINDsmall_dev/`,
read in name order as one dataset). Tab-separated, no header:

    news.tsv       news id, category, subcategory, title, abstract, url, title entities,
                   abstract entities (url and entities are not read)
    behaviors.tsv  impression id, user id, time (`11/11/2019 9:05:58 AM`, read as UTC),
                   click history (space-separated news ids), impressions (`N123-1 N456-0`)

Rules:
- A clicked impression item (`-1`) is an interaction at the impression's time; clicks of one
  impression keep their column order.
- The history column holds clicks from before the log: each distinct history item of a user (first
  seen order, over all their lines) becomes an interaction one second apart, ending one second
  before the user's first impression. A history item the user also clicks in an impression is
  kept once, at the impression's time.
- Negatives (`-0`) are not interactions. The impression holding a user's last click (latest time,
  then file order) is kept as that user's impression pool: every news id it showed. Users with at
  least 3 interactions get a fixed split equal to the leave-one-out one (last click the target,
  the one before it the validation item) with that pool; other impressions' negatives are dropped
  (memory follows the clicks).
- The pools are impressions (`Dataset.pool_source`): `recgraph bench` samples each user's negatives
  from the catalog's news the user never clicked, as for every dataset and as AMEM4Rec's paper does
  (Sec. 4.1.1), and draws them from the impression only under `--candidate-source impressions`.
- The catalog is the news the kept data names (clicked news and the kept impressions' news). A
  news id missing from `news.tsv`, a line without 5 fields, a bad time or an impression that is not
  `<news id>-0`/`-1` (MIND's unlabelled test split) is a `DataFormatError` naming file and line.
"""

from __future__ import annotations

import re
import sys
from datetime import UTC, datetime
from pathlib import Path

from world.data import Dataset, Interaction, Item, PresplitUser
from world.errors import DataFormatError
from world.loaders.lines import read_lines
from world.loaders.text import clean_title

BEHAVIORS, NEWS = "behaviors.tsv", "news.tsv"
_TIME = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4}) (\d{1,2}):(\d{2}):(\d{2}) ([AP]M)")


def mind_folders(path: Path) -> list[Path]:
    """The folders `path` names that hold a MIND split (module docstring); empty when none."""
    if path.is_file():
        return [path.parent] if path.name == BEHAVIORS else []
    if (path / BEHAVIORS).is_file():
        return [path]
    return [p for p in sorted(path.iterdir()) if (p / BEHAVIORS).is_file()] if path.is_dir() else []


def parse_time(path: Path, line: int, raw: str) -> float:
    """Epoch seconds (UTC) of a MIND time like `11/11/2019 9:05:58 AM`."""
    match = _TIME.fullmatch(raw.strip())
    problem = f"time {raw!r} is not like '11/11/2019 9:05:58 AM'"
    if not match:
        raise DataFormatError(path, line, problem)
    month, day, year, hour, minute, second = (int(g) for g in match.groups()[:6])
    if not 1 <= hour <= 12:
        raise DataFormatError(path, line, problem)
    hour = hour % 12 + (12 if match.group(7) == "PM" else 0)
    try:
        return datetime(year, month, day, hour, minute, second, tzinfo=UTC).timestamp()
    except ValueError:  # a day, minute or second out of range
        raise DataFormatError(path, line, problem) from None


def read_news(folders: list[Path]) -> dict[str, Item]:
    """Every news item of the folders' `news.tsv` files (a repeated id keeps its first line)."""
    news: dict[str, Item] = {}
    for folder in folders:
        path = folder / NEWS
        for line, text in read_lines(path):
            fields = text.split("\t")
            if len(fields) < 4 or not fields[0].strip():
                problem = f"expected at least 4 tab-separated fields, found {len(fields)}"
                raise DataFormatError(path, line, problem)
            news_id = sys.intern(fields[0].strip())
            if news_id in news:
                continue
            abstract = clean_title(fields[4]) if len(fields) > 4 else ""
            title = clean_title(fields[3])
            categories = tuple(dict.fromkeys(c for c in (fields[1].strip(), fields[2].strip()) if c))
            news[news_id] = Item(news_id, title or f"item {news_id}", categories, abstract or None)
    return news


class _Users:
    """What the behaviors stream keeps per user."""

    def __init__(self, news: dict[str, Item]) -> None:
        self.canonical: dict[str, str] = {news_id: news_id for news_id in news}
        """News id -> the one string object every interaction holds (unknown ids are absent)."""
        self.first_time: dict[str, float] = {}
        self.history: dict[str, dict[str, None]] = {}
        self.history_seen: dict[str, int] = {}
        """Hash of the history column last read per user: MIND repeats it on every line."""
        self.clicks: list[Interaction] = []
        self.pool: dict[str, tuple[float, int, list[str]]] = {}

    def news_id(self, path: Path, line: int, token: str) -> str:
        """The canonical id of `token`, or a `DataFormatError` when news.tsv lacks it."""
        news_id = self.canonical.get(token)
        if news_id is None:
            raise DataFormatError(path, line, f"news id {token!r} is not in {NEWS}")
        return news_id


def _impressions(path: Path, line: int, column: str, users: _Users) -> tuple[list[str], list[str]]:
    """The news ids an impression column showed, and those clicked."""
    shown, clicked = [], []
    canonical = users.canonical
    for token in column.split():
        if len(token) < 3 or token[-2] != "-" or token[-1] not in "01":
            problem = f"malformed impression {token!r}: expected <news id>-1 (clicked) or -0"
            raise DataFormatError(path, line, problem + " (MIND's test split has no labels)")
        news_id = canonical.get(token[:-2]) or users.news_id(path, line, token[:-2])
        shown.append(news_id)
        if token[-1] == "1":
            clicked.append(news_id)
    return shown, clicked


def read_behaviors(path: Path, users: _Users, order: int) -> int:
    """Stream one `behaviors.tsv` into `users`; `order` numbers lines across files (returned)."""
    for line, text in read_lines(path):
        fields = text.split("\t")
        if len(fields) != 5:
            raise DataFormatError(path, line, f"expected 5 tab-separated fields, found {len(fields)}")
        user = sys.intern(fields[1].strip())
        if not user:
            raise DataFormatError(path, line, "empty user id")
        stamp = parse_time(path, line, fields[2])
        if users.history_seen.get(user) != (seen := hash(fields[3])):
            users.history_seen[user] = seen
            kept = users.history.setdefault(user, {})
            kept.update((users.news_id(path, line, h), None) for h in fields[3].split())
        shown, clicked = _impressions(path, line, fields[4], users)
        if stamp < users.first_time.get(user, float("inf")):
            users.first_time[user] = stamp
        users.clicks.extend(Interaction(user, news_id, stamp) for news_id in clicked)
        order += 1
        if clicked and (stamp, order) > users.pool.get(user, (float("-inf"), -1))[:2]:
            users.pool[user] = (stamp, order, shown)
    return order


def _history_events(users: _Users) -> list[Interaction]:
    clicked: dict[str, set[str]] = {}
    for event in users.clicks:
        clicked.setdefault(event.user_id, set()).add(event.item_id)
    events = []
    for user, history in users.history.items():
        earlier = [h for h in history if h not in clicked.get(user, ())]
        start = users.first_time[user] - len(earlier)
        events.extend(Interaction(user, item, start + k) for k, item in enumerate(earlier))
    return events


def _presplit(interactions: list[Interaction], users: _Users) -> dict[str, PresplitUser]:
    by_user: dict[str, list[Interaction]] = {}
    for event in interactions:
        by_user.setdefault(event.user_id, []).append(event)
    presplit = {}
    for user, events in by_user.items():
        if len(events) >= 3 and user in users.pool:
            events.sort(key=lambda e: e.timestamp)  # stable: the leave-one-out order
            items = [e.item_id for e in events]
            presplit[user] = PresplitUser(tuple(items[:-2]), items[-2], items[-1], tuple(users.pool[user][2]))
    return presplit


def load_mind(path: Path) -> Dataset:
    """Load the MIND split(s) `path` names (module docstring)."""
    folders = mind_folders(path)
    if not folders:
        raise DataFormatError(path, None, f"no {BEHAVIORS} here or in a subfolder")
    news = read_news(folders)
    users, order = _Users(news), 0
    for folder in folders:
        order = read_behaviors(folder / BEHAVIORS, users, order)
    if not users.first_time:
        raise DataFormatError(folders[0] / BEHAVIORS, None, "no impressions")
    interactions = _history_events(users) + users.clicks
    users.clicks = []
    presplit = _presplit(interactions, users)
    named = {e.item_id for e in interactions}
    for fixed in presplit.values():
        named.update(fixed.candidates or ())
    folder = folders[0] if len(folders) == 1 else folders[0].parent
    return Dataset(
        name=folder.name,
        items={news_id: item for news_id, item in news.items() if news_id in named},
        interactions=interactions,
        presplit=presplit,
        pool_source="impressions",
        source=str(folder),
    )
