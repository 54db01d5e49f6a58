"""Filters applied to a dataset after loading: the k-core and the papers' user filter.

- `k_core(dataset, k)` (`--min-interactions K`): the iterative k-core. Users and items with fewer
  than `k` interactions are dropped, and again, until every user and item left has at least `k`
  (repeated interactions count, as RecBole's filter counts them). The catalog is the items left.
- `min_user_interactions(dataset, k)` (`--min-user-interactions K`): one pass keeping the users with
  at least `k` interactions and all their interactions; the catalog is unchanged (AMEM4Rec's "users
  with more than 10 interactions" is `--min-user-interactions 11`).
Both given: the k-core first, then the user filter.

A filtered dataset is named by its spec, `<dataset>#kcore:<k>` and/or `#min-user:<k>`
(`filtered_spec`), so every process (workers, servers) that loads the spec applies the same filter,
and its caches (`world.paths.dataset_key`) never mix with the unfiltered data's. A fixed split
(`Dataset.presplit`) follows the filter: a user whose target is dropped leaves it, dropped items
leave histories, validation items and candidate pools. `Dataset.filtered` says what was kept
(users, items, interactions before → after); the run header shows it (`filter_notes`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from world.data import Dataset, PresplitUser
from world.errors import ProtocolError

if TYPE_CHECKING:
    import numpy as np

    from world.dataset_environment import Environment

KCORE_MARK = "#kcore:"
USER_MARK = "#min-user:"
_SUFFIX = re.compile(r"(#kcore:(\d+)|#min-user:(\d+))$")


@dataclass(frozen=True)
class Filters:
    """The filters a spec asks for (0: off)."""

    kcore: int = 0
    """`--min-interactions`: the iterative k-core's k."""
    min_user: int = 0
    """`--min-user-interactions`: the least interactions a kept user has."""

    def __bool__(self) -> bool:
        """Whether any filter is on."""
        return bool(self.kcore or self.min_user)


def filtered_spec(spec: str, min_interactions: int = 0, min_user_interactions: int = 0) -> str:
    """`spec` with the filter marks the options ask for (unchanged when both are 0)."""
    options = {"--min-interactions": min_interactions, "--min-user-interactions": min_user_interactions}
    for option, value in options.items():
        if value < 0:
            raise ProtocolError(f"{option} must be 0 (off) or more, got {value}")
    base, given = split_spec(spec)
    kcore = min_interactions or given.kcore
    min_user = min_user_interactions or given.min_user
    return base + (f"{KCORE_MARK}{kcore}" if kcore else "") + (f"{USER_MARK}{min_user}" if min_user else "")


def split_spec(spec: str) -> tuple[str, Filters]:
    """The unfiltered spec and the filters its trailing marks name."""
    kcore = min_user = 0
    while match := _SUFFIX.search(spec):
        if match.group(2) is not None:
            kcore = kcore or int(match.group(2))
        else:
            min_user = min_user or int(match.group(3))
        spec = spec[: match.start()]
    return spec, Filters(kcore, min_user)


def _codes(values: list[str]) -> np.ndarray:
    import numpy as np

    index: dict[str, int] = {}
    return np.fromiter((index.setdefault(v, len(index)) for v in values), dtype=np.int64, count=len(values))


def core_mask(users: np.ndarray, items: np.ndarray, k: int) -> tuple[np.ndarray, int]:
    """Which interactions (rows of the user and item code arrays) the k-core keeps, and the rounds
    it took."""
    import numpy as np

    keep = np.ones(len(users), dtype=bool)
    rounds = 0
    while True:
        rounds += 1
        user_count = np.bincount(users[keep], minlength=users.max(initial=0) + 1)
        item_count = np.bincount(items[keep], minlength=items.max(initial=0) + 1)
        still = keep & (user_count[users] >= k) & (item_count[items] >= k)
        if still.sum() == keep.sum():
            return keep, rounds
        keep = still


def _presplit(dataset: Dataset, users: set[str], items: Mapping[str, Any]) -> dict[str, PresplitUser] | None:
    if dataset.presplit is None:
        return None
    kept = {}
    for user, fixed in dataset.presplit.items():
        if user not in users or fixed.target not in items:
            continue
        history = [i for i in fixed.history if i in items]
        valid = fixed.valid if fixed.valid in items else (history.pop() if history else None)
        pool = tuple(i for i in fixed.candidates if i in items) if fixed.candidates is not None else None
        kept[user] = PresplitUser(tuple(history), valid, fixed.target, pool)
    return kept


def _counts(dataset: Dataset) -> tuple[int, int, int]:
    return len(set(dataset.user_ids())), len(dataset.items), len(dataset.interactions)


def _filtered(dataset: Dataset, keep: np.ndarray, items: dict[str, Any], mark: str, rule: str) -> Dataset:
    interactions = [e for e, k in zip(dataset.interactions, keep.tolist(), strict=True) if k]
    users = {e.user_id for e in interactions}
    result = replace(
        dataset,
        name=dataset.name + mark.replace("#", "-").replace(":", ""),
        source=dataset.source + mark,
        items=items,
        interactions=interactions,
        presplit=_presplit(dataset, users, items),
        users={u: a for u, a in dataset.users.items() if u in users},
        instructions={u: t for u, t in dataset.instructions.items() if u in users},
    )
    before, after = _counts(dataset), _counts(result)
    names = ("users", "items", "interactions")
    parts = ", ".join(f"{n} {b:,} → {a:,}" for n, b, a in zip(names, before, after, strict=True))
    note = f"{rule}: {parts}"
    result.filtered = "; ".join(n for n in (dataset.filtered, note) if n)
    return result


def k_core(dataset: Dataset, k: int) -> Dataset:
    """The iterative k-core of `dataset` (module docstring); `k` <= 1 changes nothing."""
    if k <= 1:
        return dataset
    users = _codes([e.user_id for e in dataset.interactions])
    items = _codes([e.item_id for e in dataset.interactions])
    keep, rounds = core_mask(users, items, k)
    kept_items = {e.item_id for e, kept in zip(dataset.interactions, keep.tolist(), strict=True) if kept}
    catalog = {i: item for i, item in dataset.items.items() if i in kept_items}
    rule = f"{k}-core (users and items with at least {k} interactions, {rounds} rounds)"
    return _filtered(dataset, keep, catalog, f"{KCORE_MARK}{k}", rule)


def min_user_interactions(dataset: Dataset, k: int) -> Dataset:
    """Only the users with at least `k` interactions (module docstring); `k` <= 1 changes nothing."""
    if k <= 1:
        return dataset
    import numpy as np

    counts: dict[str, int] = {}
    for event in dataset.interactions:
        counts[event.user_id] = counts.get(event.user_id, 0) + 1
    keep = np.fromiter((counts[e.user_id] >= k for e in dataset.interactions), dtype=bool)
    rule = f"users with at least {k} interactions"
    return _filtered(dataset, keep, dataset.items, f"{USER_MARK}{k}", rule)


def apply_filters(dataset: Dataset, filters: Filters) -> Dataset:
    """`dataset` under `filters`: the k-core first, then the user filter; refused when nothing is left."""
    result = k_core(dataset, filters.kcore) if filters.kcore else dataset
    result = min_user_interactions(result, filters.min_user) if filters.min_user else result
    if filters and not result.interactions:
        raise ProtocolError(f"dataset {dataset.name!r}: {result.filtered}; nothing is left to evaluate")
    return result


def filter_notes(env: Environment, contexts: Mapping[str, Any]) -> list[str]:
    """The run header's line about the filters (a `recgraph.run_header.DATASET_NOTES` hook)."""
    del contexts  # the same for every method
    return [f"filters: {env.dataset.filtered}"] if env.dataset.filtered else []
