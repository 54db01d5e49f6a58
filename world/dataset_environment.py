"""`Environment`: everything a graph needs about one dataset (its split, training matrix and lazily
built models), and the split each scenario evaluates (`scenario_cases`). Which `Environment` a spec
names, the dataset's or an evaluation world's, is world/environment.py's `get_environment`."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from scipy import sparse

from world.data import Dataset, natural_key
from world.errors import InvalidRecInput
from world.scenarios import OWN_SPLIT, cold_start_cases, visible_history
from world.split import UserCase, leave_one_out

if TYPE_CHECKING:
    from world.item_vectors import ItemVectors

T = TypeVar("T")


class Environment:
    """A dataset with its split, training matrix and lazily built models."""

    def __init__(self, dataset: Dataset, min_interactions: int = 3) -> None:
        """Split the dataset (users with at least `min_interactions`) and index its training
        interactions."""
        self.dataset = dataset
        self.cases: dict[str, UserCase] = leave_one_out(dataset, min_interactions)
        self.item_ids: list[str] = sorted(dataset.items, key=natural_key)
        self.item_index: dict[str, int] = {item: i for i, item in enumerate(self.item_ids)}
        self.user_ids: list[str] = dataset.user_ids()
        self.user_index: dict[str, int] = {user: i for i, user in enumerate(self.user_ids)}
        self._all_events = self._events_by_user()
        self.train_matrix = self._training_matrix()
        self.popularity: dict[str, int] = Counter(
            e.item_id for case in self.cases.values() for e in case.history
        )
        self._resources: dict[str, Any] = {}
        self._building: dict[str, threading.RLock] = {}
        self._lock = threading.Lock()

    def _events_by_user(self) -> dict[str, list[str]]:
        events: dict[str, list[tuple[float, int, str]]] = {}
        for order, e in enumerate(self.dataset.interactions):
            events.setdefault(e.user_id, []).append((e.timestamp, order, e.item_id))
        return {u: [item for _, _, item in sorted(rows)] for u, rows in events.items()}

    def _training_matrix(self) -> sparse.csr_matrix:
        """Users x items, 1 where a training interaction exists (validation/test excluded)."""
        rows, cols = [], []
        for user, case in self.cases.items():
            for e in case.history:
                rows.append(self.user_index[user])
                cols.append(self.item_index[e.item_id])
        data = np.ones(len(rows), dtype=np.float32)
        shape = (len(self.user_ids), len(self.item_ids))
        matrix = sparse.csr_matrix((data, (rows, cols)), shape=shape)
        matrix.data[:] = 1.0  # repeated interactions count once
        return matrix

    def require_user(self, user_id: str) -> None:
        """Raise `InvalidRecInput` naming the user when the dataset does not have it."""
        if user_id not in self.user_index:
            raise InvalidRecInput(
                f"unknown user id {user_id!r} (dataset {self.dataset.name!r} has {len(self.user_ids)} users)"
            )

    def require_items(self, item_ids: list[str]) -> None:
        """Raise `InvalidRecInput` naming the first item id the catalog does not have."""
        for item_id in item_ids:
            if item_id not in self.item_index:
                raise InvalidRecInput(
                    f"unknown item id {item_id!r} (not in the {self.dataset.name!r} catalog)"
                )

    def item_rows(self, item_ids: Iterable[str]) -> np.ndarray:
        """The sorted, distinct catalog rows of the ids the catalog has (int64; others skipped)."""
        index = self.item_index
        return np.array(sorted({index[i] for i in item_ids if i in index}), dtype=np.int64)

    def history(self, user_id: str, scenario: str = "classic") -> list[str]:
        """The user's visible history: all before the held-out test target, per scenario (all of it
        in a scenario's own view, `Dataset.cases_from`: the benchmark built the scenario into it)."""
        self.require_user(user_id)
        if self.dataset.cases_from:
            scenario = "classic"
        case = self.cases.get(user_id)
        if case is None and scenario == "cold_start":  # split down to 2 interactions for it
            case = scenario_cases(self, scenario).get(user_id)
        if case is None:  # too few interactions to split: everything is history
            return list(self._all_events.get(user_id, []))
        return visible_history(case, scenario)

    def interacted(self, user_id: str) -> set[str]:
        """Every item the user ever interacted with (train, validation and test)."""
        return set(self._all_events.get(user_id, []))

    def item_vectors(self) -> ItemVectors:
        """MiniLM embeddings of the catalog items, row i for `item_ids[i]`: indexed like a matrix,
        each row embedded on first use and kept on disk (`world.item_vectors`)."""
        from world.item_vectors import ItemVectors

        return self.resource("item_vectors", lambda: ItemVectors(self.dataset, self.item_ids))

    def peek(self, key: str) -> Any:
        """The resource `key` if it is built already, else None (never builds it)."""
        with self._lock:
            return self._resources.get(key)

    def resource(self, key: str, build: Callable[[], T]) -> T:
        """Build a heavy resource once (thread-safe) and reuse it for the process's life. One lock
        per key: a long build (a catalog index) never holds up look-ups of other resources."""
        with self._lock:
            if key in self._resources:
                return self._resources[key]
            building = self._building.setdefault(key, threading.RLock())
        with building:
            with self._lock:
                if key in self._resources:
                    return self._resources[key]
            value = build()
            with self._lock:
                self._resources[key] = value
            return value


def scenario_cases(env: Environment, scenario: str) -> Mapping[str, UserCase]:
    """The split whose users `scenario` may evaluate: the dataset's, or for cold_start the users with
    2-3 interactions (`world.scenarios.cold_start_cases`, computed once per dataset; `OWN_SPLIT`)."""
    if scenario in OWN_SPLIT:
        return env.resource("cold_start_cases", lambda: cold_start_cases(env.dataset))
    return env.cases
