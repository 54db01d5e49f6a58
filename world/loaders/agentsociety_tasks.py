"""AgentSociety / AgentRecBench recommendation tasks: `tasks/task_<n>.json` with
`groundtruth/groundtruth_<n>.json` (or both flat in the folder).

A task is `{"type": "recommendation", "user_id", "candidate_category", "candidate_list", "loc"}`,
its ground truth `{"ground truth": item_id}`; `loc` is the user's [latitude, longitude], [-1, -1]
when the task places the user nowhere. A task fixes its user's split: the user's reviewed items by
time without the target, the last one the validation target, the rest the history; the candidates
as given (bench's `auto` candidate source evaluates on them; the runner shuffles them). Two tasks
for one user is an error.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from world.data import Interaction, Item, PresplitUser, natural_key
from world.errors import DataFormatError
from world.loaders.agentsociety_json import line_of, read_object, required_id

TRUTH_FIELD = "ground truth"
NOWHERE = (-1.0, -1.0)
"""`loc` of a task that places its user nowhere."""


def find_tasks(folder: Path) -> list[tuple[Path, Path]]:
    """Pairs (task file, ground-truth file): `tasks/` + `groundtruth/`, else flat in `folder`."""
    for task_dir, truth_dir in ((folder / "tasks", folder / "groundtruth"), (folder, folder)):
        tasks = sorted(task_dir.glob("task_*.json"), key=lambda p: natural_key(p.stem[5:]))
        if tasks:
            return [(t, truth_dir / f"groundtruth_{t.stem[5:]}.json") for t in tasks]
    return []


def _pool(task_path: Path, text: str, task: dict[str, Any], items: Mapping[str, Item]) -> tuple[str, ...]:
    """The task's candidate list, checked against the catalog."""
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
        raise DataFormatError(task_path, line_of(text, "candidate_list"), problem)
    return pool


def _location(task_path: Path, text: str, task: dict[str, Any]) -> tuple[float, float] | None:
    """The task's `loc` as (latitude, longitude); None when absent or [-1, -1]."""
    raw = task.get("loc")
    if raw is None:
        return None
    values = raw if isinstance(raw, list) else []
    numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
    if len(numbers) != 2 or len(values) != 2 or not all(math.isfinite(v) for v in numbers):
        raise DataFormatError(task_path, line_of(text, "loc"), "field 'loc' must be [latitude, longitude]")
    point = (float(numbers[0]), float(numbers[1]))
    if point == NOWHERE:
        return None
    if not (-90 <= point[0] <= 90 and -180 <= point[1] <= 180):
        raise DataFormatError(task_path, line_of(text, "loc"), f"field 'loc' is not a place: {raw!r}")
    return point


def read_pair(
    task_path: Path, truth_path: Path, items: Mapping[str, Item]
) -> tuple[str, tuple[str, ...], str, tuple[float, float] | None]:
    """One task and its ground truth: the user, the candidate pool, the target and the user's place."""
    task, text = read_object(task_path)
    if task.get("type", "recommendation") != "recommendation":
        problem = f"not a recommendation task (type {task['type']!r})"
        raise DataFormatError(task_path, line_of(text, "type"), problem)
    user = required_id(task_path, line_of(text, "user_id"), task, "user_id")
    pool = _pool(task_path, text, task, items)
    place = _location(task_path, text, task)
    truth, text = read_object(truth_path)
    target = required_id(truth_path, line_of(text, TRUTH_FIELD), truth, TRUTH_FIELD)
    if target not in items:
        problem = f"ground truth {target!r} is not in item.json"
        raise DataFormatError(truth_path, line_of(text, TRUTH_FIELD), problem)
    return user, pool, target, place


@dataclass(frozen=True)
class Task:
    """One recommendation task with its ground truth, checked against the catalog."""

    user: str
    """The user the task evaluates."""
    candidates: tuple[str, ...]
    """The task's candidate pool, as given."""
    target: str
    """The ground-truth item."""
    place: tuple[float, float] | None
    """Where the task places the user (latitude, longitude), None when nowhere."""


def read_tasks(pairs: list[tuple[Path, Path]], items: Mapping[str, Item]) -> list[Task]:
    """Every task of `pairs`, checked (read before the reviews, so they know whose texts to keep)."""
    tasks: dict[str, Task] = {}
    for task_path, truth_path in pairs:
        user, pool, target, place = read_pair(task_path, truth_path, items)
        if user in tasks:
            line = line_of(task_path.read_text(encoding="utf-8-sig"), "user_id")
            raise DataFormatError(task_path, line, f"user {user!r} already has a task")
        tasks[user] = Task(sys.intern(user), pool, target, place)
    return list(tasks.values())


def task_splits(
    tasks: list[Task], interactions: list[Interaction]
) -> tuple[dict[str, PresplitUser], dict[str, tuple[float, float]]]:
    """Each task user's fixed split and candidates, and where the tasks place their users."""
    by_user: dict[str, list[Interaction]] = {task.user: [] for task in tasks}
    for event in interactions:
        if event.user_id in by_user:
            by_user[event.user_id].append(event)
    presplit: dict[str, PresplitUser] = {}
    for task in tasks:
        ordered = sorted(by_user[task.user], key=lambda event: event.timestamp)
        seen = [event.item_id for event in ordered if event.item_id != task.target]
        presplit[task.user] = PresplitUser(
            tuple(seen[:-1]), seen[-1] if seen else None, task.target, task.candidates
        )
    places = {task.user: task.place for task in tasks if task.place is not None}
    return presplit, places
