"""MemRec's memory graph G: text memories of users and items (durable, versioned SQLite rows) over
an in-memory CSR adjacency of the training interactions.

Node ids are "u:<user id>" and "i:<item id>". Memories start deterministic (items: title, year,
categories, a truncated description; users: top categories with shares and the three most recent
training titles) at version 0; every applied update bumps the version by one. Updates are
compare-and-set against the version they were computed from, and idempotent by update id.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tools.memrec.adjacency import shared_adjacency
from world.data import Item
from world.environment import Environment
from world.paths import dataset_cache

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (node_id TEXT PRIMARY KEY, kind TEXT NOT NULL, memory TEXT NOT NULL,
                                  version INTEGER NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS applied_updates (update_id TEXT PRIMARY KEY, node_id TEXT NOT NULL,
                                            version INTEGER NOT NULL, applied_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
RESET_TABLES = ("nodes", "applied_updates", "jobs")
"""Tables `reset()` empties (`jobs` is the writer's queue, when present)."""


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


class MemoryGraph:
    """Node memories in SQLite (WAL) plus user->items and item->users CSR adjacency in memory."""

    def __init__(self, env: Environment, path: Path) -> None:
        """Use `MemoryGraph.open`."""
        self.env = env
        self.path = path
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        adjacency = shared_adjacency(env)
        self.user_ptr, self.user_items = adjacency.user_ptr, adjacency.user_items
        self.user_item_times, self.user_item_weights = adjacency.user_item_times, adjacency.user_item_weights
        self.item_ptr, self.item_users = adjacency.item_ptr, adjacency.item_users
        self.item_user_times, self.item_user_weights = adjacency.item_user_times, adjacency.item_user_weights
        self.connection().executescript(_SCHEMA)
        with self.transaction() as conn:
            self._seed(conn)

    @classmethod
    def open(cls, env: Environment, path: str | Path | None = None) -> MemoryGraph:
        """Open (creating and seeding if needed) the graph of `env`; default file is per dataset."""
        target = Path(path) if path is not None else dataset_cache(env.dataset) / "memrec.sqlite"
        target.parent.mkdir(parents=True, exist_ok=True)
        return cls(env, target)

    def connection(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; WAL; 60 s busy timeout)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=60000")
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (BEGIN IMMEDIATE) on this thread's connection; rolled back on error."""
        conn = self.connection()
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _seed(self, conn: sqlite3.Connection) -> None:
        env = self.env
        ids = [user_node(u) for u in env.user_ids] + [item_node(i) for i in env.item_ids]
        fingerprint = hashlib.sha256("\x1e".join(ids).encode()).hexdigest()
        row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
        if row and row[0] == fingerprint:
            return
        now = time.time()
        texts = initial_user_memories(env)
        users = [(user_node(u), "user", text, now) for u, text in zip(env.user_ids, texts, strict=True)]
        items = [(item_node(i), "item", item_memory(env.dataset.items[i]), now) for i in env.item_ids]
        conn.executemany(
            "INSERT OR IGNORE INTO nodes (node_id, kind, memory, version, updated_at) VALUES (?, ?, ?, 0, ?)",
            users + items,
        )
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seed', ?)", (fingerprint,))

    def memory(self, node_id: str) -> tuple[str, int]:
        """(memory text, version) of one node; KeyError when the node does not exist."""
        row = (
            self.connection()
            .execute("SELECT memory, version FROM nodes WHERE node_id = ?", (node_id,))
            .fetchone()
        )
        if row is None:
            raise KeyError(f"unknown memory-graph node {node_id!r}")
        return row[0], row[1]

    def memories(
        self, node_ids: Iterable[str], conn: sqlite3.Connection | None = None
    ) -> dict[str, tuple[str, int]]:
        """{node_id: (text, version)} for the nodes that exist, in one query (optionally in `conn`'s txn)."""
        rows = (conn or self.connection()).execute(
            "SELECT node_id, memory, version FROM nodes WHERE node_id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(node_ids)),),
        )
        return {node: (text, version) for node, text, version in rows}

    def compare_and_set(
        self, conn: sqlite3.Connection, update_id: str, node_id: str, new_text: str, based_on_version: int
    ) -> bool:
        """Inside a `transaction()`: apply one update if the node is still at `based_on_version`.

        True when applied now or already applied earlier under the same `update_id`; False on a
        version conflict. KeyError for an unknown node.
        """
        seen = conn.execute("SELECT 1 FROM applied_updates WHERE update_id = ?", (update_id,)).fetchone()
        if seen:
            return True
        now = time.time()
        cursor = conn.execute(
            "UPDATE nodes SET memory = ?, version = version + 1, updated_at = ?"
            " WHERE node_id = ? AND version = ?",
            (new_text, now, node_id, based_on_version),
        )
        if cursor.rowcount == 0:
            if conn.execute("SELECT 1 FROM nodes WHERE node_id = ?", (node_id,)).fetchone() is None:
                raise KeyError(f"unknown memory-graph node {node_id!r}")
            return False
        conn.execute(
            "INSERT INTO applied_updates (update_id, node_id, version, applied_at) VALUES (?, ?, ?, ?)",
            (update_id, node_id, based_on_version + 1, now),
        )
        return True

    def apply_update(self, update_id: str, node_id: str, new_text: str, based_on_version: int) -> bool:
        """Compare-and-set one node's memory (see `compare_and_set`); its own transaction."""
        with self.transaction() as conn:
            return self.compare_and_set(conn, update_id, node_id, new_text, based_on_version)

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
        with self.transaction() as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table in RESET_TABLES:
                if table in tables:
                    conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM meta WHERE key = 'seed'")
            self._seed(conn)

    def close(self) -> None:
        """Close every connection this graph opened (from any thread)."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
