"""MemRec's memory graph G: text memories of users and items (durable, versioned rows) over an
in-memory CSR adjacency of the training interactions.

The rows live in a SQLite file by default (tools/memrec/store_sqlite.py) or, when
`RECGRAPH_DATABASE_URL` is set, in PostgreSQL (tools/memrec/store_postgres.py), where processes on
any machine share them; both behave the same.

Node ids are "u:<user id>" and "i:<item id>". Memories start deterministic (items: title, year,
categories, a truncated description; users: top categories with shares and the three most recent
training titles) at version 0; every applied update bumps the version by one. Updates are
compare-and-set against the version they were computed from, and idempotent by update id.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tools.memrec.adjacency import shared_adjacency
from tools.memrec.store_postgres import PostgresStore
from tools.memrec.store_sqlite import SqliteStore
from world.data import Item
from world.database import database_url
from world.environment import Environment
from world.paths import dataset_cache, dataset_key

DEFAULT_MEMORY = "memrec"
"""Name of a dataset's default memory (its file: `<dataset cache>/memrec.sqlite`)."""


def user_node(user_id: str) -> str:
    """Node id of a user."""
    return f"u:{user_id}"


def item_node(item_id: str) -> str:
    """Node id of an item."""
    return f"i:{item_id}"


def item_memory(item: Item, description_chars: int = 160) -> str:
    """An item's initial memory: title (year), categories and a truncated description."""
    year = item.attributes.get("year")
    title = f"{item.title} ({year})" if year and year not in item.title else item.title
    parts = [title.rstrip(".") + "."]
    if item.categories:
        parts.append("Categories: " + ", ".join(item.categories) + ".")
    if item.description:
        text = " ".join(item.description.split())
        cut = text if len(text) <= description_chars else text[:description_chars].rsplit(" ", 1)[0] + "…"
        parts.append(cut)
    return " ".join(parts)


def user_memory(env: Environment, user_id: str) -> str:
    """A user's initial memory from the training history only (never validation or test)."""
    case = env.cases.get(user_id)
    history = case.history if case else ()
    if not history:
        return "No training interactions yet."
    counts = Counter(c for e in history for c in env.dataset.items[e.item_id].categories)
    total = sum(counts.values())
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    parts = [f"History of {len(history)} items."]
    if top:
        parts.append("Top categories: " + ", ".join(f"{c} {n / total:.0%}" for c, n in top) + ".")
    recent = [env.dataset.items[e.item_id].title for e in reversed(history[-3:])]
    parts.append("Most recent: " + "; ".join(f'"{t}"' for t in recent) + ".")
    return " ".join(parts)


def initial_user_memories(env: Environment) -> list[str]:
    """`user_memory` of every user in `env.user_ids` order, built once per process and dataset."""
    return env.resource("memrec_initial_user_memories", lambda: [user_memory(env, u) for u in env.user_ids])


@dataclass(frozen=True)
class Neighbourhood:
    """The 1-hop items and 2-hop users of a target user in the training graph."""

    user_id: str
    """The target user."""
    item_ids: list[str]
    """1-hop: items the user interacted with in training."""
    item_times: np.ndarray
    """Timestamp of the user's (latest) interaction with each item."""
    item_weights: np.ndarray
    """Edge weight of each item (the rating, or 1.0 without ratings)."""
    user_ids: list[str]
    """2-hop: other users sharing at least one item (empty when hops=1)."""
    shared_counts: np.ndarray
    """Items each 2-hop user shares with the target user."""
    user_times: np.ndarray
    """Latest timestamp of each 2-hop user's interaction with a shared item."""
    anchor_time: float
    """The target user's latest training timestamp (0.0 without history)."""


def memory_key(env: Environment, path: str | Path | None) -> str:
    """A memory's name in a shared database: `<dataset key>:<memory>`, where <memory> is
    `DEFAULT_MEMORY` for the dataset's default file, else the file's path relative to the working
    directory when inside it (the same on every machine running from a checkout), else absolute.
    Distinct files stay distinct memories, as they are in SQLite."""
    if path is None:
        return f"{dataset_key(env.dataset)}:{DEFAULT_MEMORY}"
    target = Path(path).absolute()
    try:
        name = str(target.relative_to(Path.cwd()))
    except ValueError:
        name = str(target)
    return f"{dataset_key(env.dataset)}:{name}"


Store = SqliteStore | PostgresStore
"""Where a graph's rows live."""


class MemoryGraph:
    """Node memories in a store (SQLite or PostgreSQL) plus user->items and item->users CSR
    adjacency in memory."""

    def __init__(self, env: Environment, path: Path, store: Store | None = None) -> None:
        """Use `MemoryGraph.open`."""
        self.env = env
        self.path = path
        """The memory's SQLite file (with PostgreSQL: where it would be, for local side files only)."""
        self.store: Store = store if store is not None else SqliteStore(path)
        """The rows' store; its `name` identifies the memory."""
        self.shared = self.store.shared
        """True when the memory lives in a shared database (other processes may write it)."""
        adjacency = shared_adjacency(env)
        self.user_ptr, self.user_items = adjacency.user_ptr, adjacency.user_items
        self.user_item_times, self.user_item_weights = adjacency.user_item_times, adjacency.user_item_weights
        self.item_ptr, self.item_users = adjacency.item_ptr, adjacency.item_users
        self.item_user_times, self.item_user_weights = adjacency.item_user_times, adjacency.item_user_weights
        self.store.seed(self._fingerprint(), self._seed_rows)

    @classmethod
    def open(cls, env: Environment, path: str | Path | None = None) -> MemoryGraph:
        """Open (creating and seeding if needed) the graph of `env`; default file is per dataset.

        With `RECGRAPH_DATABASE_URL` set the graph lives in that database under `memory_key`
        (DatabaseError, one line, when it cannot be reached); otherwise in the SQLite file."""
        target = Path(path) if path is not None else dataset_cache(env.dataset) / f"{DEFAULT_MEMORY}.sqlite"
        target.parent.mkdir(parents=True, exist_ok=True)
        url = database_url()
        store = PostgresStore(url, memory_key(env, path)) if url else SqliteStore(target)
        return cls(env, target, store)

    @property
    def name(self) -> str:
        """The memory's identity: its file, or its key in the shared database."""
        return self.store.name

    def connection(self) -> sqlite3.Connection:
        """This thread's SQLite connection (SQLite memories only; for inspection and tests)."""
        if not isinstance(self.store, SqliteStore):
            raise TypeError(f"memory {self.name} is not a SQLite file")
        return self.store.connection()

    def _node_ids(self) -> list[str]:
        return [user_node(u) for u in self.env.user_ids] + [item_node(i) for i in self.env.item_ids]

    def _fingerprint(self) -> str:
        return hashlib.sha256("\x1e".join(self._node_ids()).encode()).hexdigest()

    def _seed_rows(self) -> list[tuple[str, str, str]]:
        env = self.env
        texts = initial_user_memories(env)
        users = [(user_node(u), "user", text) for u, text in zip(env.user_ids, texts, strict=True)]
        items = [(item_node(i), "item", item_memory(env.dataset.items[i])) for i in env.item_ids]
        return users + items

    def memory(self, node_id: str) -> tuple[str, int]:
        """(memory text, version) of one node; KeyError when the node does not exist."""
        found = self.store.memories([node_id])
        if node_id not in found:
            raise KeyError(f"unknown memory-graph node {node_id!r}")
        return found[node_id]

    def memories(self, node_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
        """{node_id: (text, version)} for the nodes that exist, in one query."""
        return self.store.memories(node_ids)

    def apply_update(self, update_id: str, node_id: str, new_text: str, based_on_version: int) -> bool:
        """Compare-and-set one node's memory in its own transaction: True when applied now or already
        applied earlier under the same `update_id`; False on a version conflict (the node is no
        longer at `based_on_version`). KeyError for an unknown node."""
        return self.store.apply_update(update_id, node_id, new_text, based_on_version)

    def changed_rows(self) -> list[tuple[str, str]]:
        """(node id, memory) of every node updated since seeding (version > 0)."""
        return self.store.changed_rows()

    def change_stamp(self) -> tuple[object, object]:
        """(cache slot, stamp): while a slot's stamp is unchanged, so is `changed_rows()`."""
        return self.store.change_stamp()

    def neighbours(self, user_id: str, hops: int = 2) -> Neighbourhood:
        """The user's training items (1 hop) and, for hops=2, the users sharing them (no per-node query)."""
        if hops not in (1, 2):
            raise ValueError(f"hops must be 1 or 2, got {hops}")
        self.env.require_user(user_id)
        u = self.env.user_index[user_id]
        lo, hi = self.user_ptr[u], self.user_ptr[u + 1]
        items, times = self.user_items[lo:hi], self.user_item_times[lo:hi]
        users, counts, last = np.zeros(0, dtype=int), np.zeros(0, dtype=int), np.zeros(0)
        if hops == 2 and items.size:
            starts, ends = self.item_ptr[items], self.item_ptr[items + 1]
            lengths = ends - starts
            offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
            index = offsets + np.arange(lengths.sum())
            who, when = self.item_users[index], self.item_user_times[index]
            per_user = np.bincount(who, minlength=len(self.env.user_ids))
            per_user[u] = 0
            users = np.flatnonzero(per_user)
            latest = np.full(per_user.size, -np.inf)
            np.maximum.at(latest, who, when)
            counts, last = per_user[users], latest[users]
        return Neighbourhood(
            user_id=user_id,
            item_ids=[self.env.item_ids[i] for i in items],
            item_times=times.copy(),
            item_weights=self.user_item_weights[lo:hi].copy(),
            user_ids=[self.env.user_ids[v] for v in users],
            shared_counts=counts,
            user_times=last,
            anchor_time=float(times.max()) if times.size else 0.0,
        )

    def reset(self) -> None:
        """Forget every update (and any queued writer job) and restore the initial memories."""
        self.store.reset(self._fingerprint(), self._seed_rows)

    def close(self) -> None:
        """Release the store's connections (SQLite: every thread's; PostgreSQL: the pool is shared)."""
        self.store.close()
