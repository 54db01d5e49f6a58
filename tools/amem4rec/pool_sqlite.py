"""The embedded AMEM4Rec pool store (the default): one folder per pool, nothing to set up.

    <pool>/manifest.json   dataset (name, source) and the pool configuration it was trained with
    <pool>/pool.sqlite     memories (current text, version, embedding), every version in `history`,
                           the ledger of applied windows, proposals logged before they are applied
    <pool>/chroma/         the persistent Chroma collection (cosine space, explicit MiniLM function)

SQLite is the record; every vector is also held in memory for exact scoring. Chroma is the search
index of a pool too big to score whole (more than `EXACT_UP_TO` memories): it is opened, and synced
with the record, the first time such a pool is searched, and kept in step from then on. A smaller
pool never opens it, so training writes no index that its searches would not read (a Chroma upsert
per round cost most of a heuristic round). The contract is `tools.amem4rec.pool`'s.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from tools.amem4rec import pool as contract
from tools.amem4rec.index import PoolError, PoolIndex
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.record import Memory, decode_vector
from world.embeddings import EMBEDDING_DIM

DATABASE = "pool.sqlite"
MANIFEST = "manifest.json"
TABLES = {"memories": "memories", "history": "history", "windows": "windows", "proposals": "proposals"}
"""Table names the shared SQL's placeholders stand for, in a pool's own file."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY, behavior_explanation TEXT NOT NULL, pattern_description TEXT NOT NULL,
    evolution_count INTEGER NOT NULL, version INTEGER NOT NULL, created_user TEXT NOT NULL,
    created_window TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL,
    embedding BLOB NOT NULL, position INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS history (
    memory_id TEXT NOT NULL, version INTEGER NOT NULL, behavior_explanation TEXT NOT NULL,
    pattern_description TEXT NOT NULL, evolution_count INTEGER NOT NULL, kind TEXT NOT NULL,
    window_key TEXT NOT NULL, proposed TEXT, at REAL NOT NULL, PRIMARY KEY (memory_id, version));
CREATE TABLE IF NOT EXISTS windows (
    seq INTEGER PRIMARY KEY AUTOINCREMENT, window_key TEXT UNIQUE NOT NULL, action TEXT NOT NULL,
    stored TEXT, linked TEXT NOT NULL, evolved TEXT NOT NULL, merged TEXT NOT NULL,
    usage TEXT NOT NULL, applied_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS proposals (window_key TEXT PRIMARY KEY, plan TEXT NOT NULL);
"""


def write_manifest(folder: Path, manifest: dict[str, Any]) -> None:
    """Write a pool folder's manifest atomically (a crash never leaves half of one)."""
    temporary = folder / f"{MANIFEST}.tmp"
    temporary.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    temporary.replace(folder / MANIFEST)


def _blob(value: Any) -> Any:
    return np.asarray(value, dtype="<f4").tobytes() if isinstance(value, np.ndarray) else value


class SqliteSession:
    """The shared SQL run on a pool's own SQLite file (no pool column: the file is the pool)."""

    def __init__(self, db: sqlite3.Connection) -> None:
        """Statements on `db` (the caller holds the pool's lock)."""
        self.db = db

    def fetch(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """The rows of a query, as dicts in column order."""
        return [dict(r) for r in self.db.execute(sql.format(**TABLES, pool="1 = 1"), params)]

    def execute(self, sql: str, params: tuple | list = ()) -> None:
        """Run a statement (vectors are stored as little-endian float32 bytes)."""
        self.db.execute(sql.format(**TABLES, pool="1 = 1"), [_blob(p) for p in params])

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """Add one row to `table`."""
        columns = ", ".join(row)
        self.db.execute(
            f"INSERT INTO {TABLES[table]} ({columns}) VALUES ({','.join('?' * len(row))})",
            [_blob(v) for v in row.values()],
        )


class SqlitePool(MemoryPool):
    """One pool folder, opened (use `tools.amem4rec.folder.open_pool`)."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        """Open the database and the index of a folder whose manifest was checked."""
        super().__init__(manifest)
        self.folder: Path | None = folder
        """The pool's folder (its query-vector file lives there too)."""
        self.location, self.where = str(folder), f"at {folder}"
        try:
            self._db = sqlite3.connect(folder / DATABASE, check_same_thread=False, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")  # a killed process loses nothing committed
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            rows = self._db.execute("SELECT id, version, embedding FROM memories").fetchall()
        except sqlite3.DatabaseError as error:
            raise PoolError(f"pool folder {folder} is damaged: {DATABASE}: {error}") from None
        self._session = SqliteSession(self._db)
        self._vectors = {r["id"]: decode_vector(r["embedding"]) for r in rows}
        if any(v.shape != (EMBEDDING_DIM,) for v in self._vectors.values()):
            raise PoolError(
                f"pool folder {folder} is damaged: an embedding is not {EMBEDDING_DIM}-dimensional"
            )
        self._index: PoolIndex | None = None

    def close(self) -> None:
        """Close the database connection (the object is unusable afterwards)."""
        with self._lock:
            self._db.close()
            if self._index is not None:
                self._index.close()
                self._index = None

    def size(self) -> int:
        """Memories in the pool."""
        return len(self._vectors)

    def vectors(self, ids: list[str]) -> np.ndarray:
        """The stored embeddings of `ids` (rows in that order)."""
        with self._lock:
            rows = [self._vectors[i] for i in ids]
        return np.array(rows, dtype=np.float32).reshape(len(rows), EMBEDDING_DIM)

    def save_manifest(self) -> None:
        """Rewrite `manifest.json` (atomically)."""
        assert self.folder is not None
        write_manifest(self.folder, self.manifest)

    def log_proposal(self, plan: dict[str, Any]) -> None:
        """Keep a window's plan durably until it is applied (a resumed run applies it as is)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO proposals VALUES (?, ?)", (plan["window_key"], json.dumps(plan))
            )

    @contextmanager
    def _reading(self) -> Iterator[SqliteSession]:
        with self._lock:
            yield self._session

    @contextmanager
    def _round(self) -> Iterator[SqliteSession]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._session
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def search_index(self) -> PoolIndex:
        """The pool's Chroma index, opened and synced with the record on first use (repairing any
        crash that fell between a commit and its index write)."""
        assert self.folder is not None
        with self._lock:  # the writers' lock: no round commits between the sync and the first upsert
            if self._index is None:
                index = PoolIndex(self.folder)
                versions = {r["id"]: r["version"] for r in self._read("SELECT id, version FROM {memories}")}
                index.sync(versions, self._index_rows)
                self._index = index
            return self._index

    def _candidates(self, query: np.ndarray, n: int) -> tuple[dict[str, np.ndarray], dict[str, Memory]]:
        with self._lock:
            if len(self._vectors) <= max(contract.EXACT_UP_TO, n):
                return dict(self._vectors), {}
        ids = self.search_index().nearest(query, n)
        with self._lock:
            return {i: self._vectors[i] for i in ids if i in self._vectors}, {}

    def _committed(self, changed: dict[str, np.ndarray]) -> None:
        """Hold the round's new vectors in memory and, once the index is open, write them to Chroma
        in one call (under the writers' lock; a crash before that write is repaired when the index is
        next opened)."""
        self._vectors.update(changed)
        if changed and self._index is not None:
            ids = sorted(changed)
            rows = self.memories(ids)
            self._index.upsert([rows[i] for i in ids], [changed[i] for i in ids])

    def _index_rows(self, ids: list[str]) -> tuple[list[Memory], list[np.ndarray]]:
        rows = self.memories(ids)
        return [rows[i] for i in ids], [self._vectors[i] for i in ids]
