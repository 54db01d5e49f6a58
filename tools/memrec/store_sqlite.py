"""The memory graph's zero-setup store: one SQLite file (WAL) per memory, holding the node memories,
the applied update ids and Stage W's job queue (table `jobs`), for writers of one machine.

Transactions are `BEGIN IMMEDIATE`: SQLite takes its single write lock at the start, so a job's
compare-and-set of every node and its done-mark commit together or not at all.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from tools.memrec.jobs import Outcome, PropagationJob, VersionConflict

SeedRows = Callable[[], list[tuple[str, str, str]]]
"""Builds the initial (node id, kind, memory) rows; called only when the graph must be (re)seeded."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS nodes (node_id TEXT PRIMARY KEY, kind TEXT NOT NULL, memory TEXT NOT NULL,
                                  version INTEGER NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS applied_updates (update_id TEXT PRIMARY KEY, node_id TEXT NOT NULL,
                                            version INTEGER NOT NULL, applied_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
_JOBS = """CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY, payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, error TEXT, submitted_at REAL NOT NULL, finished_at REAL,
    conflicts INTEGER NOT NULL DEFAULT 0)"""
RESET_TABLES = ("nodes", "applied_updates", "jobs")
"""Tables `reset()` empties (`jobs` is the writer's queue, when present)."""


class SqliteStore:
    """Node memories, applied update ids and the job queue in one SQLite file."""

    shared = False
    """False: only processes of this machine see this store (they share its file)."""

    def __init__(self, path: Path) -> None:
        """Open (creating the tables of) the file at `path`."""
        self.path = path
        self.name = str(path)
        """The store's identity (one writer per process and name)."""
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self.connection().executescript(_SCHEMA)

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

    def seed(self, fingerprint: str, rows: SeedRows) -> None:
        """Insert the initial memories unless the graph was seeded with the same node ids."""
        with self.transaction() as conn:
            self._seed(conn, fingerprint, rows)

    def _seed(self, conn: sqlite3.Connection, fingerprint: str, rows: SeedRows) -> None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'seed'").fetchone()
        if row and row[0] == fingerprint:
            return
        now = time.time()
        conn.executemany(
            "INSERT OR IGNORE INTO nodes (node_id, kind, memory, version, updated_at) VALUES (?, ?, ?, 0, ?)",
            [(node, kind, text, now) for node, kind, text in rows()],
        )
        conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('seed', ?)", (fingerprint,))

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
        """`compare_and_set` in its own transaction."""
        with self.transaction() as conn:
            return self.compare_and_set(conn, update_id, node_id, new_text, based_on_version)

    def changed_rows(self) -> list[tuple[str, str]]:
        """(node id, memory) of every node updated since seeding."""
        return self.connection().execute("SELECT node_id, memory FROM nodes WHERE version > 0").fetchall()

    def change_stamp(self) -> tuple[int, tuple[int, int]]:
        """(cache slot, stamp): the stamp changes whenever `changed_rows` may have. The slot is this
        thread's connection: SQLite's data_version counts other connections' commits only, so the
        connection's own total_changes completes it."""
        conn = self.connection()
        return id(conn), (conn.execute("PRAGMA data_version").fetchone()[0], conn.total_changes)

    def reset(self, fingerprint: str, rows: SeedRows) -> None:
        """Forget every update and queued job, and restore the initial memories."""
        with self.transaction() as conn:
            tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            for table in RESET_TABLES:
                if table in tables:
                    conn.execute(f"DELETE FROM {table}")
            conn.execute("DELETE FROM meta WHERE key = 'seed'")
            self._seed(conn, fingerprint, rows)

    def create_queue(self) -> None:
        """Create the `jobs` table (and add the `conflicts` column to a file from before it existed)."""
        conn = self.connection()
        conn.execute(_JOBS)
        columns = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
        if "conflicts" not in columns:
            conn.execute("ALTER TABLE jobs ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0")

    def enqueue(self, jobs: Iterable[PropagationJob]) -> list[PropagationJob]:
        """Persist the jobs in one transaction; returns those whose id was new."""
        fresh = []
        with self.transaction() as conn:
            for job in jobs:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO jobs (job_id, payload, submitted_at) VALUES (?, ?, ?)",
                    (job.job_id, job.to_json(), time.time()),
                )
                if cursor.rowcount:
                    fresh.append(job)
        return fresh

    def pending_jobs(self) -> list[PropagationJob]:
        """The queued jobs not applied nor failed yet, oldest first (to resume after a crash)."""
        rows = self.connection().execute("SELECT payload FROM jobs WHERE status = 'pending' ORDER BY rowid")
        return [PropagationJob.from_json(payload) for (payload,) in rows]

    def apply_job(
        self, job: PropagationJob, current: dict[str, tuple[str, int]] | None, attempt: int, conflicts: int
    ) -> Outcome:
        """One attempt: compare-and-set every node of `job` from `current` (None: read them inside
        the write lock, which cannot conflict) and mark the job done, in one transaction."""
        try:
            with self.transaction() as conn:
                status = conn.execute("SELECT status FROM jobs WHERE job_id = ?", (job.job_id,)).fetchone()
                if status is not None and status[0] != "pending":
                    return "skipped"  # a replay: already applied (or failed)
                if current is None:
                    current = self.memories(job.node_ids(), conn)
                texts = job.compute(current)
                for node in job.node_ids():
                    update_id = f"{job.job_id}#{node}"
                    if not self.compare_and_set(conn, update_id, node, texts[node], current[node][1]):
                        raise VersionConflict(node)
                conn.execute(
                    "UPDATE jobs SET status = 'done', attempts = ?, conflicts = ?, error = NULL,"
                    " finished_at = ? WHERE job_id = ?",
                    (attempt, conflicts, time.time(), job.job_id),
                )
        except VersionConflict:
            return "conflict"
        return "applied"

    def fail_job(self, job_id: str, error: str) -> None:
        """Mark a job failed with its error."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE jobs SET status = 'failed', error = ?, finished_at = ? WHERE job_id = ?",
                (error, time.time(), job_id),
            )

    def job_stats(self) -> dict[str, int]:
        """Number of jobs per status."""
        rows = self.connection().execute("SELECT status, COUNT(*) FROM jobs GROUP BY status")
        return {status: count for status, count in rows}

    def job_failures(self) -> list[tuple[str, str]]:
        """(job_id, error) of every failed job."""
        rows = self.connection().execute("SELECT job_id, error FROM jobs WHERE status = 'failed'")
        return [(job_id, error) for job_id, error in rows]

    def job_conflicts(self) -> int:
        """Version conflicts that forced a recompute, summed over the done jobs."""
        return self.connection().execute("SELECT COALESCE(SUM(conflicts), 0) FROM jobs").fetchone()[0]

    def done_jobs(self, prefix: str) -> set[str]:
        """Ids of the done jobs starting with `prefix`."""
        rows = self.connection().execute(
            "SELECT job_id FROM jobs WHERE status = 'done' AND substr(job_id, 1, ?) = ?",
            (len(prefix), prefix),
        )
        return {job_id for (job_id,) in rows}

    def has_pending(self) -> bool:
        """Whether any job is still queued (not done nor failed)."""
        row = self.connection().execute("SELECT EXISTS (SELECT 1 FROM jobs WHERE status = 'pending')")
        return bool(row.fetchone()[0])

    def close(self) -> None:
        """Close every connection this store opened (from any thread)."""
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
