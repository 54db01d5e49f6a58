"""The memory graph's shared store: node memories, applied update ids and saved memory vectors in
PostgreSQL, so writers and readers in any number of processes and machines share one memory.

Every table has a `graph_key` column naming the memory (`<dataset key>:<memory name>`, see
`tools.memrec.graph.memory_key`): any number of datasets and memory files share one database, and
`reset()` touches its own rows only. Each operation is one transaction wrapped in
`retry_on_disconnect`, so a database restart is waited for and the transaction replayed; replays
are no-ops (update ids, job done-marks, `ON CONFLICT DO NOTHING`). The job queue is in
`tools/memrec/job_queue.py`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from tools.memrec.job_queue import PostgresJobQueue
from tools.memrec.store_sqlite import SeedRows
from world.database import retry_on_disconnect, shared_pool

if TYPE_CHECKING:
    from psycopg import Connection

T = TypeVar("T")

_SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS memrec_change_seq;
CREATE TABLE IF NOT EXISTS memrec_nodes (
    graph_key TEXT NOT NULL, node_id TEXT NOT NULL, kind TEXT NOT NULL, memory TEXT NOT NULL,
    version INTEGER NOT NULL, updated_at DOUBLE PRECISION NOT NULL,
    change BIGINT NOT NULL DEFAULT nextval('memrec_change_seq'), PRIMARY KEY (graph_key, node_id));
CREATE INDEX IF NOT EXISTS memrec_nodes_changed ON memrec_nodes (graph_key) WHERE version > 0;
CREATE TABLE IF NOT EXISTS memrec_applied_updates (
    graph_key TEXT NOT NULL, update_id TEXT NOT NULL, node_id TEXT NOT NULL, version INTEGER NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (graph_key, update_id));
CREATE TABLE IF NOT EXISTS memrec_meta (
    graph_key TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (graph_key, key));
CREATE TABLE IF NOT EXISTS memrec_vectors (
    graph_key TEXT NOT NULL, text_hash TEXT NOT NULL, vector BYTEA NOT NULL,
    PRIMARY KEY (graph_key, text_hash));
CREATE TABLE IF NOT EXISTS memrec_jobs (
    graph_key TEXT NOT NULL, job_id TEXT NOT NULL, seq BIGSERIAL, payload TEXT NOT NULL,
    status TEXT NOT NULL DEFAULT 'pending', attempts INTEGER NOT NULL DEFAULT 0,
    conflicts INTEGER NOT NULL DEFAULT 0, owner TEXT, lease_until TIMESTAMPTZ, error TEXT,
    submitted_at DOUBLE PRECISION NOT NULL, finished_at DOUBLE PRECISION, PRIMARY KEY (graph_key, job_id));
CREATE INDEX IF NOT EXISTS memrec_jobs_pending ON memrec_jobs (graph_key, seq) WHERE status = 'pending';
"""
_SCHEMA_LOCK = 0x6D656D726563
"""Advisory lock id serialising schema creation (concurrent CREATE ... IF NOT EXISTS can collide)."""
RESET_TABLES = ("memrec_nodes", "memrec_applied_updates", "memrec_jobs", "memrec_vectors")
"""Tables whose rows of one memory `reset()` deletes."""


def text_hash(text: str) -> str:
    """Key of a memory text's saved vector."""
    return hashlib.sha256(text.encode()).hexdigest()


class PostgresStore(PostgresJobQueue):
    """One memory graph's rows in a shared PostgreSQL database (see the module docstring)."""

    shared = True
    """True: other processes and machines may read and write this memory concurrently."""

    def __init__(self, url: str, key: str) -> None:
        """Connect (DatabaseError naming the URL when unreachable) and create the tables if needed."""
        self.url = url
        self.key = key
        """This memory's `graph_key`."""
        self.name = f"postgres:{key}"
        """The store's identity (one writer per process and name)."""
        self.pool = shared_pool(url)
        self.run(self._create_schema, "creating MemRec's tables")

    def run(self, work: Callable[[Connection], T], what: str) -> T:
        """`work(conn)` in one transaction on a pooled connection, replayed across a restart."""

        def attempt() -> T:
            with self.pool.connection() as conn, conn.transaction():
                return work(conn)

        return retry_on_disconnect(self.url, attempt, f"{what} ({self.key})")

    @staticmethod
    def _create_schema(conn: Connection) -> None:
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        conn.execute(_SCHEMA)

    def seed(self, fingerprint: str, rows: SeedRows) -> None:
        """Insert the initial memories unless the graph was seeded with the same node ids."""
        self.run(lambda conn: self._seed(conn, fingerprint, rows), "seeding the memory graph")

    def _seed(self, conn: Connection, fingerprint: str, rows: SeedRows) -> None:
        found = conn.execute(
            "SELECT value FROM memrec_meta WHERE graph_key = %s AND key = 'seed'", (self.key,)
        ).fetchone()
        if found and found[0] == fingerprint:
            return
        now = time.time()
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO memrec_nodes (graph_key, node_id, kind, memory, version, updated_at)"
                " VALUES (%s, %s, %s, %s, 0, %s) ON CONFLICT DO NOTHING",
                [(self.key, node, kind, text, now) for node, kind, text in rows()],
            )
        conn.execute(
            "INSERT INTO memrec_meta (graph_key, key, value) VALUES (%s, 'seed', %s)"
            " ON CONFLICT (graph_key, key) DO UPDATE SET value = EXCLUDED.value",
            (self.key, fingerprint),
        )

    def memories(self, node_ids: Iterable[str]) -> dict[str, tuple[str, int]]:
        """{node_id: (text, version)} for the nodes that exist, in one query."""
        ids = list(node_ids)
        return self.run(lambda conn: self._memories(conn, ids), "reading memories")

    def _memories(self, conn: Connection, ids: list[str], lock: bool = False) -> dict[str, tuple[str, int]]:
        # Locking in node-id order: two jobs locking overlapping nodes cannot deadlock.
        suffix = " ORDER BY node_id FOR UPDATE" if lock else ""
        rows = conn.execute(
            "SELECT node_id, memory, version FROM memrec_nodes WHERE graph_key = %s AND node_id = ANY(%s)"
            + suffix,
            (self.key, ids),
        )
        return {node: (text, version) for node, text, version in rows}

    def compare_and_set(
        self, conn: Connection, update_id: str, node_id: str, new_text: str, based_on_version: int
    ) -> bool:
        """Inside a transaction: apply one update if the node is still at `based_on_version`.

        True when applied now or already applied under the same `update_id`; False on a version
        conflict (the UPDATE waits for a concurrent writer of the row, then sees its commit).
        KeyError for an unknown node."""
        seen = conn.execute(
            "SELECT 1 FROM memrec_applied_updates WHERE graph_key = %s AND update_id = %s",
            (self.key, update_id),
        ).fetchone()
        if seen:
            return True
        now = time.time()
        cursor = conn.execute(
            "UPDATE memrec_nodes SET memory = %s, version = version + 1, updated_at = %s,"
            " change = nextval('memrec_change_seq') WHERE graph_key = %s AND node_id = %s AND version = %s",
            (new_text, now, self.key, node_id, based_on_version),
        )
        if cursor.rowcount == 0:
            exists = conn.execute(
                "SELECT 1 FROM memrec_nodes WHERE graph_key = %s AND node_id = %s", (self.key, node_id)
            ).fetchone()
            if exists is None:
                raise KeyError(f"unknown memory-graph node {node_id!r}")
            return False
        conn.execute(
            "INSERT INTO memrec_applied_updates (graph_key, update_id, node_id, version, applied_at)"
            " VALUES (%s, %s, %s, %s, %s)",
            (self.key, update_id, node_id, based_on_version + 1, now),
        )
        return True

    def apply_update(self, update_id: str, node_id: str, new_text: str, based_on_version: int) -> bool:
        """`compare_and_set` in its own transaction."""
        return self.run(
            lambda conn: self.compare_and_set(conn, update_id, node_id, new_text, based_on_version),
            "applying a memory update",
        )

    def changed_rows(self) -> list[tuple[str, str]]:
        """(node id, memory) of every node updated since seeding."""
        return self.run(
            lambda conn: conn.execute(
                "SELECT node_id, memory FROM memrec_nodes WHERE graph_key = %s AND version > 0", (self.key,)
            ).fetchall(),
            "reading changed memories",
        )

    def change_stamp(self) -> tuple[str, tuple[int, int]]:
        """(cache slot, stamp): the stamp changes whenever `changed_rows` may have. Every commit
        raises the sum of versions; a reset then as many updates again is told apart by `change`,
        drawn from a sequence, so larger after the reset than anything before it."""
        row = self.run(
            lambda conn: conn.execute(
                "SELECT COALESCE(SUM(version), 0), COALESCE(MAX(change), 0) FROM memrec_nodes"
                " WHERE graph_key = %s AND version > 0",
                (self.key,),
            ).fetchone(),
            "checking for changed memories",
        )
        return self.name, (int(row[0]), int(row[1]))

    def saved_vectors(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """{text: vector} of the texts whose vector some process saved for this memory."""
        by_hash = {text_hash(t): t for t in texts}
        rows = self.run(
            lambda conn: conn.execute(
                "SELECT text_hash, vector FROM memrec_vectors WHERE graph_key = %s AND text_hash = ANY(%s)",
                (self.key, list(by_hash)),
            ).fetchall(),
            "reading memory vectors",
        )
        return {by_hash[h]: np.frombuffer(bytes(blob), dtype=np.float32).copy() for h, blob in rows}

    def save_vectors(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Save float32 vectors of `texts`; a text already saved keeps its first vector."""
        rows = [
            (self.key, text_hash(t), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in zip(texts, vectors, strict=True)
        ]

        def work(conn: Connection) -> None:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memrec_vectors (graph_key, text_hash, vector) VALUES (%s, %s, %s)"
                    " ON CONFLICT DO NOTHING",
                    rows,
                )

        if rows:
            self.run(work, "saving memory vectors")

    def reset(self, fingerprint: str, rows: SeedRows) -> None:
        """Forget this memory's updates, queued jobs and saved vectors; restore the initial memories."""

        def work(conn: Connection) -> None:
            for table in RESET_TABLES:
                conn.execute(f"DELETE FROM {table} WHERE graph_key = %s", (self.key,))
            conn.execute("DELETE FROM memrec_meta WHERE graph_key = %s AND key = 'seed'", (self.key,))
            self._seed(conn, fingerprint, rows)

        self.run(work, "resetting the memory graph")

    def close(self) -> None:
        """Nothing to release: connections belong to the process's shared pool."""
