"""AMEM4Rec's tables in PostgreSQL and the session that runs the pools' shared SQL on them (one
pool's rows only, vectors as pgvector values); `tools.amem4rec.pool_postgres` is the pool itself."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from tools.amem4rec.index import PoolError
from world.database import first_line, redact, retry_on_disconnect, shared_pool
from world.embeddings import EMBEDDING_DIM

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.types import TypeInfo

TABLES = {
    "memories": "amem4rec_memories",
    "history": "amem4rec_history",
    "windows": "amem4rec_windows",
    "proposals": "amem4rec_proposals",
}
"""Table names the shared SQL's placeholders stand for in the database."""
SCHEMA_LOCK = 0x616D656D
"""Advisory lock key held while the tables are created (two processes may start at once)."""
EF_SEARCH_MAX = 1000
"""pgvector's upper bound for `hnsw.ef_search`."""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS amem4rec_pools (
    pool_id BIGSERIAL PRIMARY KEY, name TEXT UNIQUE NOT NULL, dataset TEXT NOT NULL,
    manifest TEXT NOT NULL, size INTEGER NOT NULL DEFAULT 0, indexed BOOLEAN NOT NULL DEFAULT FALSE,
    created_at DOUBLE PRECISION NOT NULL);
CREATE TABLE IF NOT EXISTS amem4rec_memories (
    pool_id BIGINT NOT NULL REFERENCES amem4rec_pools ON DELETE CASCADE, id TEXT NOT NULL,
    behavior_explanation TEXT NOT NULL, pattern_description TEXT NOT NULL,
    evolution_count INTEGER NOT NULL, version INTEGER NOT NULL, created_user TEXT NOT NULL,
    created_window TEXT NOT NULL, created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL, embedding vector({EMBEDDING_DIM}) NOT NULL,
    position BIGINT NOT NULL, PRIMARY KEY (pool_id, id));
CREATE TABLE IF NOT EXISTS amem4rec_history (
    pool_id BIGINT NOT NULL REFERENCES amem4rec_pools ON DELETE CASCADE, memory_id TEXT NOT NULL,
    version INTEGER NOT NULL, behavior_explanation TEXT NOT NULL, pattern_description TEXT NOT NULL,
    evolution_count INTEGER NOT NULL, kind TEXT NOT NULL, window_key TEXT NOT NULL, proposed TEXT,
    at DOUBLE PRECISION NOT NULL, PRIMARY KEY (pool_id, memory_id, version));
CREATE TABLE IF NOT EXISTS amem4rec_windows (
    pool_id BIGINT NOT NULL REFERENCES amem4rec_pools ON DELETE CASCADE, seq BIGSERIAL,
    window_key TEXT NOT NULL, action TEXT NOT NULL, stored TEXT, linked TEXT NOT NULL,
    evolved TEXT NOT NULL, merged TEXT NOT NULL, usage TEXT NOT NULL,
    applied_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (pool_id, window_key));
CREATE INDEX IF NOT EXISTS amem4rec_windows_order ON amem4rec_windows (pool_id, seq);
CREATE TABLE IF NOT EXISTS amem4rec_proposals (
    pool_id BIGINT NOT NULL REFERENCES amem4rec_pools ON DELETE CASCADE,
    window_key TEXT NOT NULL, plan TEXT NOT NULL, PRIMARY KEY (pool_id, window_key));
"""

_vector_types: dict[str, TypeInfo] = {}
_vector_lock = threading.Lock()


def prepare_tables(url: str) -> TypeInfo:
    """Create the tables once per process and URL; the `vector` type's description."""
    with _vector_lock:
        if url in _vector_types:
            return _vector_types[url]
    from psycopg.types import TypeInfo

    def work() -> TypeInfo | None:
        with shared_pool(url).connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
            if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.execute(_SCHEMA)
            return TypeInfo.fetch(conn, "vector")

    import psycopg

    try:
        info = retry_on_disconnect(url, work, "creating the AMEM4Rec pool tables")
    except (psycopg.errors.InsufficientPrivilege, psycopg.errors.FeatureNotSupported) as error:
        message = f"the database {redact(url)} has no pgvector extension we may use: {first_line(error)}"
        raise PoolError(message) from None
    assert info is not None  # the extension was just made sure of
    with _vector_lock:
        _vector_types[url] = info
    return info


def _vector_value(value: Any) -> Any:
    return value.to_numpy().copy() if hasattr(value, "to_numpy") else value


class PostgresSession:
    """The shared SQL run in the database, restricted to one pool's rows."""

    def __init__(self, conn: Connection, pool_id: int, vector_type: TypeInfo) -> None:
        """Statements on `conn` (vectors travel as pgvector values, in and out as float32)."""
        from pgvector.psycopg.vector import register_vector_info
        from psycopg.rows import dict_row

        self.cursor = conn.cursor(row_factory=dict_row)
        register_vector_info(self.cursor, vector_type)  # this cursor only: the connection is shared
        self.pool_id = int(pool_id)

    def sql(self, sql: str) -> str:
        """The shared SQL for this database and pool."""
        return sql.format(**TABLES, pool=f"pool_id = {self.pool_id}").replace("?", "%s")

    def fetch(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """The rows of a query, as dicts in column order (vectors as float32 arrays)."""
        self.cursor.execute(self.sql(sql), params, prepare=False, binary=True)
        return [{k: _vector_value(v) for k, v in row.items()} for row in self.cursor.fetchall()]

    def execute(self, sql: str, params: tuple | list = ()) -> None:
        """Run a statement."""
        self.cursor.execute(self.sql(sql), params)

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """Add one row of this pool to `table`."""
        columns = ", ".join(["pool_id", *row])
        values = ", ".join([str(self.pool_id), *["%s"] * len(row)])
        self.cursor.execute(f"INSERT INTO {TABLES[table]} ({columns}) VALUES ({values})", list(row.values()))
