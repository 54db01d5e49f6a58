"""Loader 2: AgentSociety / AgentRecBench JSON lines with recommendation tasks.

Files in `folder`, one JSON object a line (a single JSON array is accepted too):
- `item.json`: `item_id`; `title` (else `name`, Yelp; else `title_without_series`); `categories`
  as a list (Amazon) or a comma-separated string (Yelp); `description` as a string or a list of
  strings; every other scalar (stars, city, latitude, longitude, price, source, ...) becomes a
  string attribute, `publication_year` becomes `year`; other lists and objects are dropped.
- `user.json` (optional): `user_id` and scalar attributes (`friends` is dropped).
- `review.json`: `user_id`, `item_id`, `stars` (or `rating`), `text` (or `review_text`) and a
  time, the first of `date` (ISO like Yelp's "2018-07-07 22:09:11", or Goodreads' "Sun Jul 30
  07:44:10 -0700 2017"), `timestamp` (epoch s or ms, Amazon), `date_added`; naive times are
  UTC. No time in any review: file order, `has_time=False`; only some dated: an error.
- Tasks (optional): `tasks/task_<n>.json` + `groundtruth/groundtruth_<n>.json`, or both flat in
  `folder`: `{"type": "recommendation", "user_id", "candidate_category", "candidate_list",
  "loc"}` and `{"ground truth": item_id}`. A task fixes its user's split: the user's reviewed
  items by time without the target, the last one the validation target, the rest the history;
  the candidates as given (the runner shuffles them). Two tasks for one user is an error.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from world.data import Dataset, Interaction, Item, PresplitUser, natural_key
from world.errors import DataFormatError
from world.loaders.text import clean_title

TITLE_FIELDS = ("title", "name", "title_without_series")
TIME_FIELDS = ("date", "timestamp", "date_added")
RATING_FIELDS = ("stars", "rating")
TEXT_FIELDS = ("text", "review_text")
ITEM_USED = {"item_id", *TITLE_FIELDS, "categories", "description", "publication_year"}
USER_SKIPPED = {"user_id", "friends"}
DATE_FORMATS = ("%a %b %d %H:%M:%S %z %Y", "%Y/%m/%d %H:%M:%S", "%m/%d/%Y")
MILLISECONDS_ABOVE = 1e11
"""Epoch numbers above this are milliseconds (1e11 seconds is the year 5138)."""
TRUTH_FIELD = "ground truth"
_SEPARATORS = re.compile(r"[\s,]*")


def read_json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line, object)` for every record of a JSON-lines file or of one JSON array."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        started = False
        for number, line in enumerate(handle, start=1):
            text = line.strip()
            if not text:
                continue
            if text.startswith("[") and not started:
                yield from _array_records(path, line + handle.read(), number)
                return
            started = True
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataFormatError(path, number, f"not valid JSON: {exc.msg}") from None
            yield number, _as_object(path, number, value)


def _array_records(path: Path, text: str, first_line: int) -> Iterator[tuple[int, dict]]:
    """The elements of the JSON array in `text` (starting on `first_line`), with their lines."""
    decoder, pos, line, counted = json.JSONDecoder(), text.index("[") + 1, first_line, 0
    while True:
        pos = _SEPARATORS.match(text, pos).end()
        line, counted = line + text.count("\n", counted, pos), pos
        if text.startswith("]", pos):
            if text[pos + 1 :].strip():
                raise DataFormatError(path, line, "not valid JSON: extra data after the array")
            return
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            bad = line + text.count("\n", counted, exc.pos)
            raise DataFormatError(path, bad, f"not valid JSON: {exc.msg}") from None
        yield line, _as_object(path, line, value)


def _as_object(path: Path, line: int, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DataFormatError(path, line, f"expected a JSON object, found {type(value).__name__}")
    return value


def _id(path: Path, line: int, record: dict[str, Any], field: str) -> str:
    """A required id field as a string token."""
    value = record.get(field)
    if value is None or value == "":
        raise DataFormatError(path, line, f"missing field {field!r}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DataFormatError(path, line, f"field {field!r} must be a string or an integer")
    return str(value)


def _scalars(record: dict[str, Any], skipped: set[str]) -> dict[str, str]:
    """Every scalar field not in `skipped`, as text."""
    texts = {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value).strip()
        for key, value in record.items()
        if key not in skipped and value is not None and not isinstance(value, list | dict)
    }
    return {key: text for key, text in texts.items() if text}


def _categories(value: Any) -> tuple[str, ...]:
    parts = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    names = (str(p).strip() for p in parts if isinstance(p, str | int | float))
    return tuple(dict.fromkeys(n for n in names if n))


def _description(value: Any) -> str | None:
    if isinstance(value, list):
        value = " ".join(str(v).strip() for v in value if isinstance(v, str | int | float))
    return (value.strip() or None) if isinstance(value, str) else None


def load_items(path: Path) -> dict[str, Item]:
    """Read `item.json` into the catalog."""
    items: dict[str, Item] = {}
    for line, record in read_json_records(path):
        item_id = _id(path, line, record, "item_id")
        if item_id in items:
            raise DataFormatError(path, line, f"duplicate item id {item_id!r}")
        titles = (record.get(f) for f in TITLE_FIELDS)
        title = next((clean_title(str(t)) for t in titles if t is not None and clean_title(str(t))), "")
        attributes = _scalars(record, ITEM_USED)
        if record.get("publication_year") not in (None, "") and "year" not in attributes:
            attributes["year"] = str(record["publication_year"])
        items[item_id] = Item(
            id=item_id,
            title=title or f"item {item_id}",
            categories=_categories(record.get("categories")),
            description=_description(record.get("description")),
            attributes=attributes,
        )
    if not items:
        raise DataFormatError(path, None, "no items")
    return items


def load_users(path: Path) -> dict[str, dict[str, str]]:
    """Read an optional `user.json` into attributes by user id."""
    records = read_json_records(path) if path.is_file() else iter(())
    return {_id(path, n, r, "user_id"): _scalars(r, USER_SKIPPED) for n, r in records}


def parse_time(raw: Any) -> float | None:
    """Epoch seconds from an epoch number (s or ms) or a date string; None when neither."""
    if isinstance(raw, str) and re.fullmatch(r"\d+(\.\d+)?", raw.strip()):
        raw = float(raw)
    if isinstance(raw, int | float) and not isinstance(raw, bool):
        return raw / 1000 if raw > MILLISECONDS_ABOVE else float(raw)
    if not isinstance(raw, str):
        return None
    for form in (None, *DATE_FORMATS):
        try:
            moment = datetime.fromisoformat(raw) if form is None else datetime.strptime(raw, form)
        except ValueError:
            continue
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    return None


def _rating(path: Path, line: int, record: dict[str, Any]) -> float | None:
    for field in RATING_FIELDS:
        value = record.get(field)
        if value is None or value == "":
            continue
        try:
            return float(value if not isinstance(value, bool) else "")
        except (TypeError, ValueError):
            problem = f"field {field!r} is not a number: {value!r}"
            raise DataFormatError(path, line, problem) from None
    return None


def load_reviews(path: Path, items: dict[str, Item]) -> tuple[list[Interaction], bool]:
    """Read `review.json`; returns the interactions and whether they carry real times."""
    interactions: list[Interaction] = []
    undated: list[int] = []
    for line, record in read_json_records(path):
        user, item = _id(path, line, record, "user_id"), _id(path, line, record, "item_id")
        if item not in items:
            raise DataFormatError(path, line, f"review refers to unknown item {item!r}")
        field = next((f for f in TIME_FIELDS if record.get(f) not in (None, "")), None)
        stamp = parse_time(record[field]) if field else float(len(interactions))
        if stamp is None:
            raise DataFormatError(path, line, f"field {field!r} is not a date: {record[field]!r}")
        if not field:
            undated.append(line)
        text = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str)), "")
        review = Interaction(user, item, stamp, _rating(path, line, record), text.strip() or None)
        interactions.append(review)
    if not interactions:
        raise DataFormatError(path, None, "no reviews")
    if undated and len(undated) < len(interactions):
        fields = ", ".join(repr(f) for f in TIME_FIELDS)
        problem = f"review has no time ({fields}) while others have one"
        raise DataFormatError(path, undated[0], problem)
    return interactions, not undated


def find_tasks(folder: Path) -> list[tuple[Path, Path]]:
    """Pairs (task file, ground-truth file): `tasks/` + `groundtruth/`, else flat in `folder`."""
    for task_dir, truth_dir in ((folder / "tasks", folder / "groundtruth"), (folder, folder)):
        tasks = sorted(task_dir.glob("task_*.json"), key=lambda p: natural_key(p.stem[5:]))
        if tasks:
            return [(t, truth_dir / f"groundtruth_{t.stem[5:]}.json") for t in tasks]
    return []


def _read_object(path: Path) -> tuple[dict[str, Any], str]:
    """One JSON object file and its text."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
    return _as_object(path, 1, value), text


def _line_of(text: str, field: str) -> int:
    """The line where `"field"` first appears in `text` (1 when absent)."""
    return 1 + text.count("\n", 0, max(text.find(json.dumps(field)), 0))


def _read_pair(task_path: Path, truth_path: Path, items: dict[str, Item]) -> tuple[str, tuple[str, ...], str]:
    """One task and its ground truth: the user, the candidate pool and the target."""
    task, text = _read_object(task_path)
    if task.get("type", "recommendation") != "recommendation":
        problem = f"not a recommendation task (type {task['type']!r})"
        raise DataFormatError(task_path, _line_of(text, "type"), problem)
    user = _id(task_path, _line_of(text, "user_id"), task, "user_id")
    raw = task.get("candidate_list")
    ids = raw if isinstance(raw, list) else ()
    pool = tuple(str(c) for c in ids if isinstance(c, str | int) and c != "")
    unknown = [c for c in pool if c not in items]
    problem = None
    if raw is None:
        problem = "missing field 'candidate_list'"
    elif not pool or len(pool) != len(ids):
        problem = "field 'candidate_list' must be a non-empty list of item ids"
    elif len(set(pool)) != len(pool):
        problem = "field 'candidate_list' repeats an item"
    elif unknown:
        problem = f"candidate {unknown[0]!r} is not in item.json"
    if problem:
        raise DataFormatError(task_path, _line_of(text, "candidate_list"), problem)
    truth, text = _read_object(truth_path)
    target = _id(truth_path, _line_of(text, TRUTH_FIELD), truth, TRUTH_FIELD)
    if target not in items:
        problem = f"ground truth {target!r} is not in item.json"
        raise DataFormatError(truth_path, _line_of(text, TRUTH_FIELD), problem)
    return user, pool, target


def load_tasks(
    pairs: list[tuple[Path, Path]], items: dict[str, Item], interactions: list[Interaction]
) -> dict[str, PresplitUser]:
    """Turn task + ground-truth files into each task user's fixed split and candidates."""
    by_user: dict[str, list[Interaction]] = defaultdict(list)
    for event in interactions:
        by_user[event.user_id].append(event)
    presplit: dict[str, PresplitUser] = {}
    for task_path, truth_path in pairs:
        user, pool, target = _read_pair(task_path, truth_path, items)
        if user in presplit:
            line = _line_of(task_path.read_text(encoding="utf-8-sig"), "user_id")
            raise DataFormatError(task_path, line, f"user {user!r} already has a task")
        ordered = sorted(by_user.get(user, []), key=lambda event: event.timestamp)
        seen = [event.item_id for event in ordered if event.item_id != target]
        presplit[user] = PresplitUser(tuple(seen[:-1]), seen[-1] if seen else None, target, pool)
    return presplit


def load_agentsociety(folder: Path, name: str | None = None) -> Dataset:
    """Load an AgentSociety / AgentRecBench folder (see the module docstring) into a `Dataset`."""
    items = load_items(folder / "item.json")
    interactions, has_time = load_reviews(folder / "review.json", items)
    pairs = find_tasks(folder)
    return Dataset(
        name=name or folder.name,
        items=items,
        interactions=interactions,
        has_time=has_time,
        users=load_users(folder / "user.json"),
        presplit=load_tasks(pairs, items, interactions) if pairs else None,
        source=str(folder),
    )
