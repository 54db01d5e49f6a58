"""AMEM4Rec's global memory pool: one folder per pool, shared by every user of a dataset.

    <pool>/manifest.json   dataset (name, source) and the pool configuration it was trained with
    <pool>/pool.sqlite     memories (current text, version, embedding), every version in `history`,
                           the ledger of applied windows, proposals logged before they are applied
    <pool>/chroma/         the persistent Chroma collection (cosine space, explicit MiniLM function)

Contract:
- SQLite is the record; Chroma is the search index kept in step with it (re-synced on open if a
  crash fell between the two writes).
- `apply_all(plans)` commits a round of windows atomically, in order; per window: its rewrites
  (compare-and-set on the version the evolver read; a memory that moved on since is merged with the
  rewrite instead, so two concurrent evolutions never lose either, and both texts stay in
  `history`), its new memory, and its ledger row. A window already in the ledger is skipped, so a
  replay never duplicates a memory. The memories a round rewrote are re-embedded once, from their
  final text, in one batch (sorted by id) before the commit: the same round always forms the same
  batch (remembered under RECGRAPH_HOME, so a pool trained on the same rounds — a rerun, an
  ablation — reads it back: `tools.amem4rec.vectors`), and a crash mid-round leaves nothing of
  it behind. `apply(plan)` is a round of one.
- `search(vector, k)` returns the k most cosine-similar memories, exactly scored, ties by id. A
  pool of up to `EXACT_UP_TO` memories is scored whole (a few ms); only a bigger one asks the index
  for candidates, whose approximate neighbours can differ from run to run.
- Opening never overwrites anything: a folder of another dataset or a damaged folder is refused
  with one `PoolError` line.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tools.amem4rec.index import PoolError, PoolIndex
from tools.amem4rec.record import (
    Memory,
    decode_vector,
)
from tools.amem4rec.vectors import embed_memory_batch
from tools.memrec.writer import merge_memory
from world.embeddings import EMBEDDING_DIM

DATABASE = "pool.sqlite"
EXACT_UP_TO = 20_000
"""Pools up to this many memories are searched exactly over every stored vector (no Chroma query)."""

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


def _memory(row: sqlite3.Row) -> Memory:
    return Memory(**{f: row[f] for f in Memory.__dataclass_fields__})


class MemoryPool:
    """One pool folder, opened (use `open_pool`)."""

    def __init__(self, folder: Path, manifest: dict[str, Any]) -> None:
        """Open the database and the index of a folder whose manifest was checked."""
        self.folder, self.manifest = folder, manifest
        self.memory_chars = int(manifest["config"].get("amem4rec_memory_chars", 300))
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(folder / DATABASE, check_same_thread=False, isolation_level=None)
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")  # a killed process loses nothing committed
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(SCHEMA)
            rows = self._db.execute("SELECT id, version, embedding FROM memories").fetchall()
        except sqlite3.DatabaseError as error:
            raise PoolError(f"pool folder {folder} is damaged: {DATABASE}: {error}") from None
        self._vectors = {r["id"]: decode_vector(r["embedding"]) for r in rows}
        self._unindexed: set[str] = set()
        if any(v.shape != (EMBEDDING_DIM,) for v in self._vectors.values()):
            raise PoolError(
                f"pool folder {folder} is damaged: an embedding is not {EMBEDDING_DIM}-dimensional"
            )
        self.index = PoolIndex(folder)
        self.index.sync({r["id"]: r["version"] for r in rows}, self._index_rows)

    def close(self) -> None:
        """Close the database connection (the object is unusable afterwards)."""
        with self._lock:
            self._db.close()

    # reading
    def size(self) -> int:
        """Memories in the pool."""
        return len(self._vectors)

    def get(self, memory_id: str) -> Memory:
        """One memory; `PoolError` naming the id when the pool has none such."""
        found = self.memories([memory_id])
        if memory_id not in found:
            raise PoolError(f"no memory {memory_id!r} in the pool at {self.folder} ({self.size()} memories)")
        return found[memory_id]

    def memories(self, ids: list[str] | None = None) -> dict[str, Memory]:
        """Memories by id (all of them, in creation order, when `ids` is None)."""
        with self._lock:
            if ids is None:
                rows = self._db.execute("SELECT * FROM memories ORDER BY position").fetchall()
            else:
                marks = ",".join("?" * len(ids))
                rows = self._db.execute(f"SELECT * FROM memories WHERE id IN ({marks})", ids).fetchall()
        return {r["id"]: _memory(r) for r in rows}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every version of a memory, oldest first: texts, kind (created/evolved/merged), window."""
        self.get(memory_id)
        with self._lock:
            rows = self._db.execute(
                "SELECT * FROM history WHERE memory_id = ? ORDER BY version", (memory_id,)
            ).fetchall()
        return [{**dict(r), "proposed": json.loads(r["proposed"]) if r["proposed"] else None} for r in rows]

    def search(self, vector: np.ndarray, k: int) -> list[tuple[Memory, float]]:
        """The `k` memories most cosine-similar to `vector` (exact scores; ties by id)."""
        if k <= 0 or not self._vectors:
            return []
        query = np.asarray(vector, dtype=np.float32)
        with self._lock:
            if self.size() <= max(EXACT_UP_TO, 8 * k, 64):
                ids = list(self._vectors)
            else:
                ids = [*self.index.nearest(query, max(8 * k, 64)), *self._unindexed]
            scored = sorted(
                ((float(self._vectors[i] @ query), i) for i in ids if i in self._vectors),
                key=lambda pair: (-pair[0], pair[1]),
            )[:k]
        found = self.memories([i for _, i in scored])
        return [(found[i], score) for score, i in scored]

    def vectors(self, ids: list[str]) -> np.ndarray:
        """The stored embeddings of `ids` (rows in that order)."""
        with self._lock:
            rows = [self._vectors[i] for i in ids]
        return np.array(rows, dtype=np.float32).reshape(len(rows), EMBEDDING_DIM)

    def applied_windows(self) -> set[str]:
        """Keys of the windows whose commit is in the pool."""
        with self._lock:
            return {r[0] for r in self._db.execute("SELECT window_key FROM windows")}

    def ledger(self) -> list[dict[str, Any]]:
        """Applied windows in apply order: action, stored id, linked/evolved/merged ids, usage."""
        with self._lock:
            rows = self._db.execute("SELECT * FROM windows ORDER BY seq").fetchall()
        fields = ("linked", "evolved", "merged", "usage")
        return [{**dict(r), **{f: json.loads(r[f]) for f in fields}} for r in rows]

    def evolution_histogram(self) -> dict[int, int]:
        """Memories per evolution count."""
        with self._lock:
            rows = self._db.execute("SELECT evolution_count FROM memories").fetchall()
        return dict(sorted(Counter(r[0] for r in rows).items()))

    def fingerprint(self) -> str:
        """A digest of the pool's content (texts, counts, versions, lineage, ledger decisions; no
        wall-clock times): equal for pools built the same way."""
        digest = hashlib.sha256()
        with self._lock:
            queries = (
                "SELECT id, behavior_explanation, pattern_description, evolution_count, version, "
                "created_user, created_window FROM memories ORDER BY id",
                "SELECT memory_id, version, behavior_explanation, pattern_description, kind, "
                "window_key FROM history ORDER BY memory_id, version",
                "SELECT window_key, action, stored, linked, evolved, merged FROM windows ORDER BY window_key",
            )
            for query in queries:
                for row in self._db.execute(query):
                    digest.update(json.dumps(list(row)).encode())
        return digest.hexdigest()[:16]

    # writing
    def log_proposal(self, plan: dict[str, Any]) -> None:
        """Keep a window's plan durably until it is applied (a resumed run applies it as is)."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO proposals VALUES (?, ?)", (plan["window_key"], json.dumps(plan))
            )

    def proposals(self) -> dict[str, dict[str, Any]]:
        """Logged plans not yet applied, by window key."""
        with self._lock:
            rows = self._db.execute("SELECT window_key, plan FROM proposals").fetchall()
        return {r[0]: json.loads(r[1]) for r in rows}

    def apply(self, plan: dict[str, Any]) -> dict[str, Any]:
        """Commit one window's plan (see the module docstring); returns what happened."""
        return self.apply_all([plan])[0]

    def apply_all(
        self, plans: list[dict[str, Any]], after_each: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Commit plans one after another in ONE transaction (`after_each` sees each outcome), then
        index what changed in one Chroma write (a crash before it is repaired by the next open)."""
        outcomes, changed, rewritten = [], {}, set()
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for plan in plans:
                    outcome = self._apply_locked(plan, plan["window_key"])
                    changed.update(outcome.pop("_changed"))
                    rewritten.update(outcome["evolved"])
                    outcomes.append(outcome)
                changed.update(self._embed_rewritten(sorted(rewritten)))
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
            for memory_id, vector in changed.items():
                self._vectors[memory_id] = vector
                self._unindexed.add(memory_id)
            if after_each:
                for outcome in outcomes:
                    after_each(outcome)
            if self._unindexed:
                ids = sorted(self._unindexed)
                rows = self.memories(ids)
                self.index.upsert([rows[i] for i in ids], [self._vectors[i] for i in ids])
                self._unindexed.clear()
        return outcomes

    def _apply_locked(self, plan: dict[str, Any], key: str) -> dict[str, Any]:
        db, now = self._db, time.time()
        if db.execute("SELECT 1 FROM windows WHERE window_key = ?", (key,)).fetchone():
            db.execute("DELETE FROM proposals WHERE window_key = ?", (key,))
            return {"status": "already applied", "evolved": [], "merged": [], "stored": None, "_changed": {}}
        texts, evolved, merged = {}, [], []
        rows = self.memories([r["thought_id"] for r in plan.get("rewrites", [])])
        for rewrite in plan.get("rewrites", []):
            current = rows[rewrite["thought_id"]]
            behavior, pattern = rewrite["behavior_explanation"], rewrite["pattern_description"]
            kind, proposed = "evolved", None
            if current.version != rewrite["base_version"]:  # evolved by another window since it was read
                kind, proposed = (
                    "merged",
                    json.dumps({"behavior_explanation": behavior, "pattern_description": pattern}),
                )
                behavior = merge_memory(current.behavior_explanation, behavior, self.memory_chars)
                pattern = merge_memory(current.pattern_description, pattern, self.memory_chars)
                merged.append(current.id)
            texts[current.id] = (current, behavior, pattern, kind, proposed)
            evolved.append(current.id)
        changed: dict[str, np.ndarray] = {}
        for current, behavior, pattern, kind, proposed in texts.values():
            version, count = current.version + 1, current.evolution_count + 1
            db.execute(  # the embedding follows once per round (`_embed_rewritten`)
                "UPDATE memories SET behavior_explanation=?, pattern_description=?, evolution_count=?, "
                "version=?, updated_at=? WHERE id=?",
                (behavior, pattern, count, version, now, current.id),
            )
            db.execute(
                "INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?)",
                (current.id, version, behavior, pattern, count, kind, key, proposed, now),
            )
        stored = None
        if plan.get("store"):
            memory = plan["memory"]
            stored, vector = memory["id"], decode_vector(memory["embedding"])
            behavior, pattern = memory["behavior_explanation"], memory["pattern_description"]
            position = db.execute("SELECT COALESCE(MAX(position), 0) + 1 FROM memories").fetchone()[0]
            db.execute(
                "INSERT INTO memories VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                (stored, behavior, pattern, 0, 1, plan["user_id"], key, now, now, vector.tobytes(), position),
            )
            db.execute(
                "INSERT INTO history VALUES (?,?,?,?,?,?,?,?,?)",
                (stored, 1, behavior, pattern, 0, "created", key, None, now),
            )
            changed[stored] = vector
        db.execute(
            "INSERT INTO windows (window_key, action, stored, linked, evolved, merged, usage, applied_at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            (
                key,
                plan["action"],
                stored,
                json.dumps(plan.get("linked", [])),
                json.dumps(evolved),
                json.dumps(merged),
                json.dumps(plan.get("usage", [])),
                now,
            ),
        )
        db.execute("DELETE FROM proposals WHERE window_key = ?", (key,))
        status = "applied"
        return {"status": status, "evolved": evolved, "merged": merged, "stored": stored, "_changed": changed}

    def _embed_rewritten(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Embed the final texts of the memories a round rewrote (one batch) and store the vectors."""
        if not ids:
            return {}
        rows = self.memories(ids)
        vectors = embed_memory_batch([rows[i].text() for i in ids])
        for memory_id, vector in zip(ids, vectors, strict=True):
            self._db.execute(
                "UPDATE memories SET embedding=? WHERE id=?", (vector.astype("<f4").tobytes(), memory_id)
            )
        return dict(zip(ids, vectors, strict=True))

    def _index_rows(self, ids: list[str]) -> tuple[list[Memory], list[np.ndarray]]:
        rows = self.memories(ids)
        return [rows[i] for i in ids], [self._vectors[i] for i in ids]
