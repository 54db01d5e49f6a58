"""Which `Environment` a dataset spec names, loaded lazily once per process: the dataset's own, or
a scenario's evaluation world (`world.evaluation_world`). The class itself is
world/dataset_environment.py's."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from functools import lru_cache

from world.dataset_environment import Environment
from world.datasets import load_dataset
from world.evaluation_world import WORLD_MARK, load_world, world_spec

__all__ = ["Environment", "environment_loaded", "evaluation_world", "get_environment"]


@lru_cache(maxsize=8)
def _environment(spec: str) -> Environment:
    if WORLD_MARK in spec:
        return load_world(spec, get_environment)  # the world builds on its dataset's environment
    return Environment(load_dataset(spec))


_env_lock = threading.RLock()  # reentrant: a world's environment loads its dataset's first
_loaded: set[str] = set()


def get_environment(spec: str) -> Environment:
    """The process-wide `Environment` for a dataset name or path, or for a scenario's evaluation
    world (`world.evaluation_world`: `<dataset>#eval:<scenario>[:<digest>]`)."""
    with _env_lock:
        env = _environment(spec)
        _loaded.add(spec)
        return env


def environment_loaded(spec: str) -> bool:
    """True once `get_environment(spec)` has loaded that dataset in this process (later calls
    are quick dictionary look-ups; the first reads files and must stay off an event loop)."""
    return spec in _loaded


def evaluation_world(dataset: str, scenario: str, users: Iterable[str]) -> Environment:
    """The `Environment` of `scenario`'s world for `users` of `dataset` (the dataset's own when the
    scenario has none)."""
    return get_environment(world_spec(dataset, scenario, users))
