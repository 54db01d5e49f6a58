"""The AMEM4Rec pool store in PostgreSQL with pgvector, used when `RECGRAPH_DATABASE_URL` is set.

Many pools share one database: `amem4rec_pools` has a row per pool — its name (what
`Context.amem4rec_pool` says, or for a default pool `<dataset key>/amem4rec/pool-<config key>`, the
folder's path under RECGRAPH_HOME, so the dataset and the configuration are in it), the dataset
key, the manifest (dataset, configuration, backends) and its size — and every row of
`amem4rec_memories` (embedding in a `vector(384)` column), `amem4rec_history`, `amem4rec_windows`
and `amem4rec_proposals` carries its pool's id. Nothing is written on disk: a process with any
RECGRAPH_HOME serves what another one trained.

A round is one transaction that first locks its pool's row (`FOR UPDATE`): writers of one pool, in
any process, take turns, as SQLite's `BEGIN IMMEDIATE` makes them; other pools are not held up.
Every unit of work runs under `retry_on_disconnect`: a database restart mid-training is waited
for and the cut-off transaction replayed whole (a round already committed is found in the ledger
and skipped, so nothing is applied twice).

Search: exact (`ORDER BY embedding <=> q, id`, all of the pool's rows; a bitmap scan of the pool's
primary-key range, never an approximate index) while the pool has at most `EXACT_UP_TO` memories.
Past that an HNSW index over that pool's rows only (a partial index, `WHERE pool_id = <id>`, so no
other pool's rows crowd the candidates out) gives the candidates, with `hnsw.ef_search` at least
the number asked for; `tools.amem4rec.pool` re-scores them exactly.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from tools.amem4rec import pool as contract
from tools.amem4rec.index import PoolError
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.pool_postgres_schema import EF_SEARCH_MAX, PostgresSession, prepare_tables
from tools.amem4rec.pool_round import MEMORY_COLUMNS
from tools.amem4rec.record import Memory
from world.database import redact, retry_on_disconnect, shared_pool
from world.embeddings import EMBEDDING_DIM

if TYPE_CHECKING:
    from psycopg.types import TypeInfo

def open_postgres_pool(
    url: str, name: str, dataset_key: str, new_manifest: dict[str, Any] | None
) -> PostgresPool | None:
    """The pool called `name` in the database at `url` (created with `new_manifest` when given and
    missing); None when there is none such."""
    vector_type = prepare_tables(url)

    def work() -> tuple[int, str] | None:
        with shared_pool(url).connection() as conn:
            if new_manifest is not None:
                conn.execute(
                    "INSERT INTO amem4rec_pools (name, dataset, manifest, created_at) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT (name) DO NOTHING",
                    (name, dataset_key, json.dumps(new_manifest, sort_keys=True), time.time()),
                )
            return conn.execute(
                "SELECT pool_id, manifest FROM amem4rec_pools WHERE name = %s", (name,)
            ).fetchone()

    found = retry_on_disconnect(url, work, f"opening the AMEM4Rec pool {name!r}")
    if found is None:
        return None
    try:
        manifest = json.loads(found[1])
        if not isinstance(manifest.get("dataset"), dict) or not isinstance(manifest.get("config"), dict):
            raise ValueError("no dataset or config")
    except (ValueError, AttributeError) as error:
        raise PoolError(
            f"the pool {name!r} in the database {redact(url)} is damaged: its manifest is unreadable "
            f"({error})"
        ) from None
    pool = PostgresPool(url, int(found[0]), name, manifest, vector_type)
    pool.index_if_large()  # a crash may have fallen between a round's commit and the index build
    return pool


def postgres_pool_exists(url: str, name: str) -> bool:
    """Whether the database at `url` has a pool called `name`."""
    prepare_tables(url)

    def work() -> bool:
        with shared_pool(url).connection() as conn:
            found = conn.execute("SELECT 1 FROM amem4rec_pools WHERE name = %s", (name,)).fetchone()
            return found is not None

    return retry_on_disconnect(url, work, f"looking for the AMEM4Rec pool {name!r}")


class PostgresPool(MemoryPool):
    """One pool in the database, opened (use `tools.amem4rec.folder.open_pool`)."""

    def __init__(
        self, url: str, pool_id: int, name: str, manifest: dict[str, Any], vector_type: TypeInfo
    ) -> None:
        """A pool whose row and manifest were read (and checked by the caller)."""
        super().__init__(manifest)
        self.url, self.pool_id, self.name = url, pool_id, name
        self.location, self.where = name, f"{name!r} in the database {redact(url)}"
        self._connections = shared_pool(url)
        self._vector_type = vector_type
        self._size_seen = 0
        """The pool's size when last read (here, at each commit, by `size()`)."""

    def close(self) -> None:
        """Nothing to release: connections belong to the process's shared pool."""

    def _retrying(self, work: Any, what: str) -> Any:
        return retry_on_disconnect(self.url, work, f"{what} ({self.where})")

    @contextmanager
    def _reading(self) -> Iterator[PostgresSession]:
        with self._connections.connection() as conn:
            yield PostgresSession(conn, self.pool_id, self._vector_type)

    @contextmanager
    def _round(self) -> Iterator[PostgresSession]:
        with self._connections.connection() as conn, conn.transaction():
            session = PostgresSession(conn, self.pool_id, self._vector_type)
            session.execute("SELECT 1 FROM amem4rec_pools WHERE {pool} FOR UPDATE")
            yield session
            session.execute(
                "UPDATE amem4rec_pools SET size = (SELECT count(*) FROM {memories} WHERE {pool}) WHERE {pool}"
            )

    def _row(self) -> dict[str, Any]:
        row = self._read("SELECT size, indexed, manifest FROM amem4rec_pools WHERE {pool}")[0]
        self._size_seen = int(row["size"])
        return row

    def size(self) -> int:
        """Memories in the pool."""
        return int(self._row()["size"])

    def vectors(self, ids: list[str]) -> np.ndarray:
        """The stored embeddings of `ids` (rows in that order)."""
        marks = ",".join("?" * len(ids))
        rows = self._read(f"SELECT id, embedding FROM {{memories}} WHERE {{pool}} AND id IN ({marks})", ids)
        found = {r["id"]: r["embedding"] for r in rows}
        return np.array([found[i] for i in ids], dtype=np.float32).reshape(len(ids), EMBEDDING_DIM)

    def save_manifest(self) -> None:
        """Store the manifest in the pool's row."""

        def work() -> None:
            with self._reading() as session:
                query = "UPDATE amem4rec_pools SET manifest = ? WHERE {pool}"
                session.execute(query, (json.dumps(self.manifest, sort_keys=True),))

        self._retrying(work, "saving the pool's manifest")

    def log_proposal(self, plan: dict[str, Any]) -> None:
        """Keep a window's plan durably until it is applied (a resumed run applies it as is)."""

        def work() -> None:  # replayed, the same plan is written again: nothing changes
            with self._reading() as session:
                session.execute(
                    "INSERT INTO {proposals} (pool_id, window_key, plan) "
                    "SELECT pool_id, ?, ? FROM amem4rec_pools WHERE {pool} "
                    "ON CONFLICT (pool_id, window_key) DO UPDATE SET plan = EXCLUDED.plan",
                    (plan["window_key"], json.dumps(plan)),
                )

        self._retrying(work, "logging a proposal")

    def _candidates(self, query: np.ndarray, n: int) -> tuple[dict[str, np.ndarray], dict[str, Memory]]:
        # The size last read decides: pools only grow, so a stale one can only choose exact search.
        if self._size_seen <= max(contract.EXACT_UP_TO, n):
            setting, order = "SET LOCAL enable_indexscan = off", "embedding <=> ?, id"  # no HNSW
        else:
            setting = f"SET LOCAL hnsw.ef_search = {min(max(n, 100), EF_SEARCH_MAX)}"
            order = "embedding <=> ?"  # the order the index gives; ties are re-sorted by the caller
        query_sql = f"SELECT {MEMORY_COLUMNS}, embedding FROM {{memories}} WHERE {{pool}} ORDER BY {order} "

        def work() -> list[dict[str, Any]]:
            with self._connections.connection() as conn, conn.transaction(), conn.pipeline():
                session = PostgresSession(conn, self.pool_id, self._vector_type)
                session.execute(setting)
                return session.fetch(query_sql + f"LIMIT {int(n)}", (query,))

        rows = self._retrying(work, "searching")
        vectors = {r["id"]: r.pop("embedding") for r in rows}
        return vectors, {r["id"]: Memory(**r) for r in rows}

    def _committed(self, changed: dict[str, np.ndarray]) -> None:
        self.index_if_large()

    def index_if_large(self) -> None:
        """Build the pool's HNSW index once it holds more than `EXACT_UP_TO` memories (idempotent)."""
        row = self._row()
        if row["indexed"] or row["size"] <= contract.EXACT_UP_TO:
            return

        def work() -> None:
            with self._connections.connection() as conn, conn.transaction():
                session = PostgresSession(conn, self.pool_id, self._vector_type)
                session.execute("SELECT 1 FROM amem4rec_pools WHERE {pool} FOR UPDATE")
                session.execute(
                    f"CREATE INDEX IF NOT EXISTS amem4rec_memories_hnsw_{self.pool_id} ON {{memories}} "
                    "USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 200) "
                    "WHERE {pool}"
                )
                session.execute("UPDATE amem4rec_pools SET indexed = TRUE WHERE {pool}")

        self._retrying(work, "building the pool's HNSW index")
