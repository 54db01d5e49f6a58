"""A run's evaluation world: the dataset as everything the run trains may see it.

Under `classic` and `cold_item` the world is the dataset itself. The other scenarios get a world of
their own, a derived `Environment` with a spec `get_environment` resolves:
- `cold_user` hides each evaluated user's history before their last 3 items. Its world is the dataset
  without those hidden interactions: the users' visible items, validation item and target stay (so
  their split, target and visible history are those of the dataset), every other user keeps
  everything. The world depends on who is evaluated, so its spec names them by a digest,
  `<dataset>#eval:cold_user:<digest>`; the user list is kept in this process and in
  `<RECGRAPH_HOME>/evaluation_worlds/<digest>.json`, where worker processes (and servers sharing the
  RECGRAPH_HOME) find it.
- `evolving_long` / `evolving_short` hide each evaluated user's history older than 90 / 7 days before
  the target: their world drops it the same way (`<dataset>#eval:evolving_short:<digest>`), with a
  split floor of 2 so a user whose window holds only its validation item stays in the split.
- `cold_start` evaluates users with 2-3 interactions, which the default split drops: its world is the
  same interactions split down to 2 (`<dataset>#eval:cold_start`). A short user adds 0-1 training
  interactions, all visible to them, so no one's hidden data is in it.

Every method reads its data through `get_environment(context.dataset)`: a run whose context names the
world's spec (`bench.protocol.plan.evaluation_context`) trains and ranks against the world. That covers
AMEM4Rec's pool (windows of training histories), MemRec's memory graph (adjacency, user memories,
dataset statistics), the classic baselines (popularity, item-kNN's co-occurrence, BPR's matrix), ARAG's
popularity prior, ChainRec's training world and learned planner, and the router's prerequisites. A
world has its own dataset name and source, so its caches (BPR factors, default memories and pools,
planner checkpoints) never mix with the dataset's; it shares the dataset's item vectors (same catalog).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path

from world.data import Dataset, Interaction, natural_key
from world.dataset_environment import Environment
from world.errors import ProtocolError
from world.loaders.agentrecbench import TASK_MARK
from world.paths import cache_root
from world.scenarios import OWN_SPLIT, visible_history
from world.split import UserCase

WORLD_MARK = "#eval:"
"""Separates a dataset spec from its evaluation world's (`<dataset>#eval:<scenario>[:<digest>]`)."""
HIDES_HISTORY = frozenset({"cold_user", "evolving_long", "evolving_short"})
"""Scenarios whose world drops what they hide from the evaluated users."""
VISIBLE_FLOOR = {"evolving_long": 2, "evolving_short": 2}
"""The world's split floor where a scenario may show a user only its validation item: the user keeps
its validation item and target (2 interactions) in the world, never falling out of the split (which
would make its target a training interaction)."""
_users_of: dict[str, list[str]] = {}


def has_world(scenario: str) -> bool:
    """Whether `scenario` runs against a world of its own rather than the dataset."""
    return scenario in HIDES_HISTORY or scenario in OWN_SPLIT


def world_spec(dataset: str, scenario: str, users: Iterable[str]) -> str:
    """The spec of `scenario`'s world for the evaluated `users` of `dataset` (a name or path); the
    dataset's own spec when the scenario has no world, or when `dataset` is a scenario's own view of
    AgentRecBench's release (world/loaders/agentrecbench.py: the benchmark hid what it hides). A
    cold_user world's users are recorded (module docstring) so any process can rebuild it."""
    if TASK_MARK in dataset:
        return dataset
    if scenario in OWN_SPLIT:
        return f"{dataset}{WORLD_MARK}{scenario}"
    if scenario not in HIDES_HISTORY:
        return dataset
    chosen = sorted(set(users), key=natural_key)
    text = json.dumps({"dataset": dataset, "scenario": scenario, "users": chosen})
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    _users_of[digest] = chosen
    path = _record(digest)
    if not path.is_file():
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)  # whole or absent
    return f"{dataset}{WORLD_MARK}{scenario}:{digest}"


def _record(digest: str) -> Path:
    folder = cache_root() / "evaluation_worlds"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{digest}.json"


def _recorded_users(digest: str) -> list[str]:
    if digest in _users_of:
        return _users_of[digest]
    path = _record(digest)
    if not path.is_file():
        raise ProtocolError(
            f"evaluation world {digest} is not recorded in this process nor at {path}: start the "
            "process with the RECGRAPH_HOME of the run that made it"
        )
    return list(json.loads(path.read_text(encoding="utf-8"))["users"])


def load_world(spec: str, environment_of: Callable[[str], Environment]) -> Environment:
    """The `Environment` a world spec names, built on its dataset's, `environment_of(dataset)`
    (`world.environment.get_environment` calls this and passes itself)."""
    dataset, _, rest = spec.rpartition(WORLD_MARK)
    scenario, _, digest = rest.partition(":")
    base = environment_of(dataset)
    if scenario in OWN_SPLIT:
        world = Environment(renamed(base.dataset, scenario), min_interactions=2)
    elif scenario in HIDES_HISTORY and digest:
        users = _recorded_users(digest)
        world = Environment(
            without_hidden(base.dataset, base.cases, scenario, users, digest),
            min_interactions=VISIBLE_FLOOR.get(scenario, 3),
        )
        check_same_view(base, world, scenario, users)
    else:
        raise ProtocolError(f"{spec!r} names no evaluation world (scenario {scenario!r})")
    world.resource("item_vectors", base.item_vectors)  # the same catalog: never embedded twice
    return world


def renamed(dataset: Dataset, scenario: str, digest: str = "", **changes: object) -> Dataset:
    """`dataset` under its world's name and source (its own cache key), with `changes` applied."""
    suffix = f"#{scenario}" + (f"-{digest}" if digest else "")
    return replace(dataset, name=dataset.name + suffix, source=dataset.source + suffix, **changes)


def hidden_interactions(case: UserCase, scenario: str) -> tuple[Interaction, ...]:
    """The user's interactions before the target that `scenario` does not show (the oldest ones:
    every scenario's visible history is the most recent part)."""
    before = case.before_target()
    return before[: len(before) - len(visible_history(case, scenario))]


def without_hidden(
    dataset: Dataset, cases: Mapping[str, UserCase], scenario: str, users: Iterable[str], digest: str
) -> Dataset:
    """`dataset` without what `scenario` hides from `users` (renamed: `renamed`)."""
    dropped: set[int] = set()
    pairs: set[tuple[str, str]] = set()
    presplit = dict(dataset.presplit) if dataset.presplit is not None else None
    for user in users:
        case = cases.get(user)
        hidden = hidden_interactions(case, scenario) if case is not None else ()
        if not hidden:
            continue
        if presplit is not None and user in presplit:
            fixed = presplit[user]
            presplit[user] = replace(fixed, history=fixed.history[len(hidden) :])
            kept = {e.item_id for e in case.before_target()[len(hidden) :]} | {case.target.item_id}
            pairs.update((user, e.item_id) for e in hidden if e.item_id not in kept)
        else:
            dropped.update(id(e) for e in hidden)  # the split's events are the dataset's objects
    interactions = [
        e for e in dataset.interactions if id(e) not in dropped and (e.user_id, e.item_id) not in pairs
    ]
    return renamed(dataset, scenario, digest, interactions=interactions, presplit=presplit)


def check_same_view(base: Environment, world: Environment, scenario: str, users: Iterable[str]) -> None:
    """Raise `ValueError` unless every evaluated user keeps, in the world, the target and visible
    history the dataset gives them (the world only drops what they never see)."""
    for user in users:
        case, kept = base.cases.get(user), world.cases.get(user)
        if case is None:
            continue
        if kept is None or kept.target != case.target or kept.valid != case.valid:
            raise ValueError(f"the {scenario} world changed user {user!r}'s held-out interactions")
        if world.history(user, scenario) != base.history(user, scenario):
            raise ValueError(f"the {scenario} world changed user {user!r}'s visible history")
