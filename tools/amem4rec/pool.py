"""AMEM4Rec's global memory pool, shared by every user of a dataset: the contract its two stores keep.

Where a pool lives:
- embedded (the default, nothing to set up): one folder — `manifest.json`, `pool.sqlite` (the
  record), `chroma/` (the search index); `tools.amem4rec.pool_sqlite`.
- PostgreSQL with pgvector when `RECGRAPH_DATABASE_URL` is set: rows of tables many pools share,
  keyed by pool, embeddings in a `vector(384)` column; `tools.amem4rec.pool_postgres`. Nothing
  of it is on disk, so a process with another RECGRAPH_HOME serves a pool another one trained.

Contract (both stores; the round logic and the scoring below are written once, here):
- The record holds memories (current text, version, embedding), every version in `history`, the
  ledger of applied windows, and proposals logged before they are applied.
- `apply_all(plans)` commits a round of windows atomically, in order, in one transaction; per
  window: its rewrites (compare-and-set on the version the evolver read; a memory that moved on
  since is merged with the rewrite instead, so two concurrent evolutions never lose either, and both
  texts stay in `history`), its new memory, and its ledger row. A window already in the ledger is
  skipped, so a replay never duplicates a memory. The memories a round rewrote are re-embedded once,
  from their final text, in one batch (sorted by id) before the commit: the same round always forms
  the same batch (remembered under RECGRAPH_HOME, so a pool trained on the same rounds — a rerun, an
  ablation — reads it back: `world.vector_memo`), and a crash mid-round leaves nothing of it
  behind. `apply(plan)` is a round of one.
- `search(vector, k)` returns the k most cosine-similar memories, scored exactly here (float32 dot
  products of the stored unit vectors, the same arithmetic for both stores), ties by id. A pool of
  up to `EXACT_UP_TO` memories (or `8k`, at least 64) is searched exactly; a bigger one asks its
  store's approximate index (Chroma's HNSW, pgvector's HNSW) for candidates, whose neighbours can
  then differ from the exact ones and from one index build to another.
- Opening never overwrites anything: a pool of another dataset or a damaged one is refused with one
  `PoolError` line.
"""

from __future__ import annotations

import hashlib
import json
import threading
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import numpy as np

from tools.amem4rec.index import PoolError
from tools.amem4rec.pool_round import MEMORY_COLUMNS, Session, apply_window, embed_rewritten, memories_of
from tools.amem4rec.record import Memory

EXACT_UP_TO = 20_000
"""Pools up to this many memories are searched exactly over every stored vector (no index query)."""
HISTORY_COLUMNS = (
    "memory_id, version, behavior_explanation, pattern_description, evolution_count, kind, "
    "window_key, proposed, at"
)
WINDOW_COLUMNS = "seq, window_key, action, stored, linked, evolved, merged, usage, applied_at"
FINGERPRINT_QUERIES = (
    "SELECT id, behavior_explanation, pattern_description, evolution_count, version, created_user, "
    "created_window FROM {memories} WHERE {pool} ORDER BY id",
    "SELECT memory_id, version, behavior_explanation, pattern_description, kind, window_key "
    "FROM {history} WHERE {pool} ORDER BY memory_id, version",
    "SELECT window_key, action, stored, linked, evolved, merged FROM {windows} WHERE {pool} "
    "ORDER BY window_key",
)
"""What the fingerprint digests (no wall-clock times, no store-specific columns)."""


class MemoryPool(ABC):
    """One open pool (use `tools.amem4rec.folder.open_pool`); a store implements the abstract part."""

    manifest: dict[str, Any]
    """Dataset (name, source), the configuration the pool was trained with, backends used."""
    location: str
    """What `Context.amem4rec_pool` names this pool by: its folder, or its name in the database."""
    where: str
    """How messages name the pool ("at <folder>", "'<name>' in the database <url>")."""
    folder: Path | None = None
    """The pool's folder in the embedded store (None in the database: nothing is on disk)."""

    def __init__(self, manifest: dict[str, Any]) -> None:
        """Keep the checked manifest; writers of one process take turns on `_lock`."""
        self.manifest = manifest
        self.memory_chars = int(manifest["config"].get("amem4rec_memory_chars", 300))
        self._lock = threading.RLock()

    # what a store provides
    @abstractmethod
    def close(self) -> None:
        """Release the store's connections (the object is unusable afterwards)."""

    @abstractmethod
    def size(self) -> int:
        """Memories in the pool."""

    @abstractmethod
    def vectors(self, ids: list[str]) -> np.ndarray:
        """The stored embeddings of `ids` (rows in that order)."""

    @abstractmethod
    def save_manifest(self) -> None:
        """Store `manifest` as it is now (atomically)."""

    @abstractmethod
    def log_proposal(self, plan: dict[str, Any]) -> None:
        """Keep a window's plan durably until it is applied (a resumed run applies it as is)."""

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Session]:
        """A session for reads (each statement sees the latest commit)."""

    @abstractmethod
    def _round(self) -> AbstractContextManager[Session]:
        """A write transaction no other writer of this pool interleaves with; commits on exit."""

    @abstractmethod
    def _candidates(self, query: np.ndarray, n: int) -> tuple[dict[str, np.ndarray], dict[str, Memory]]:
        """Ids and vectors of memories to score — all of them when the pool has at most
        `max(EXACT_UP_TO, n)`, else about the `n` nearest by the store's index — and those of their
        memories the store read along with them."""

    def _retrying(self, work: Callable[[], Any], what: str) -> Any:
        """Run a whole unit of work (the database store replays it after a lost connection)."""
        return work()

    def _committed(self, changed: dict[str, np.ndarray]) -> None:
        """After a round's commit: the memories whose vector changed, with their new vectors (the
        embedded store updates its in-memory vectors and its Chroma index; the database needs nothing)."""
        del changed

    # reading
    def _read(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        def work() -> list[dict[str, Any]]:
            with self._reading() as session:
                return session.fetch(sql, params)

        return self._retrying(work, "reading the AMEM4Rec pool")

    def get(self, memory_id: str) -> Memory:
        """One memory; `PoolError` naming the id when the pool has none such."""
        found = self.memories([memory_id])
        if memory_id not in found:
            raise PoolError(f"no memory {memory_id!r} in the pool {self.where} ({self.size()} memories)")
        return found[memory_id]

    def memories(self, ids: list[str] | None = None) -> dict[str, Memory]:
        """Memories by id (all of them, in creation order, when `ids` is None)."""
        if ids is not None:

            def work() -> dict[str, Memory]:
                with self._reading() as session:
                    return memories_of(session, ids)

            return self._retrying(work, "reading the AMEM4Rec pool")
        rows = self._read(f"SELECT {MEMORY_COLUMNS} FROM {{memories}} WHERE {{pool}} ORDER BY position")
        return {r["id"]: Memory(**r) for r in rows}

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every version of a memory, oldest first: texts, kind (created/evolved/merged), window."""
        self.get(memory_id)
        rows = self._read(
            f"SELECT {HISTORY_COLUMNS} FROM {{history}} WHERE {{pool}} AND memory_id = ? ORDER BY version",
            (memory_id,),
        )
        return [{**r, "proposed": json.loads(r["proposed"]) if r["proposed"] else None} for r in rows]

    def search(self, vector: np.ndarray, k: int) -> list[tuple[Memory, float]]:
        """The `k` memories most cosine-similar to `vector` (exact scores; ties by id)."""
        if k <= 0:
            return []
        query = np.asarray(vector, dtype=np.float32)
        candidates, found = self._candidates(query, max(8 * k, 64))
        scored = sorted(
            ((float(v @ query), i) for i, v in candidates.items()), key=lambda pair: (-pair[0], pair[1])
        )[:k]
        missing = [i for _, i in scored if i not in found]
        if missing:
            found = {**found, **self.memories(missing)}
        return [(found[i], score) for score, i in scored if i in found]

    def applied_windows(self) -> set[str]:
        """Keys of the windows whose commit is in the pool."""
        return {r["window_key"] for r in self._read("SELECT window_key FROM {windows} WHERE {pool}")}

    def ledger(self) -> list[dict[str, Any]]:
        """Applied windows in apply order: action, stored id, linked/evolved/merged ids, usage."""
        rows = self._read(f"SELECT {WINDOW_COLUMNS} FROM {{windows}} WHERE {{pool}} ORDER BY seq")
        fields = ("linked", "evolved", "merged", "usage")
        return [{**r, **{f: json.loads(r[f]) for f in fields}} for r in rows]

    def evolution_histogram(self) -> dict[int, int]:
        """Memories per evolution count."""
        rows = self._read("SELECT evolution_count FROM {memories} WHERE {pool}")
        return dict(sorted(Counter(r["evolution_count"] for r in rows).items()))

    def fingerprint(self) -> str:
        """A digest of the pool's content (texts, counts, versions, lineage, ledger decisions; no
        wall-clock times): equal for pools built the same way, in either store."""
        digest = hashlib.sha256()
        for query in FINGERPRINT_QUERIES:
            for row in self._read(query):
                digest.update(json.dumps(list(row.values())).encode())
        return digest.hexdigest()[:16]

    def proposals(self) -> dict[str, dict[str, Any]]:
        """Logged plans not yet applied, by window key."""
        rows = self._read("SELECT window_key, plan FROM {proposals} WHERE {pool}")
        return {r["window_key"]: json.loads(r["plan"]) for r in rows}

    # writing
    def apply(self, plan: dict[str, Any]) -> dict[str, Any]:
        """Commit one window's plan (see the module docstring); returns what happened."""
        return self.apply_all([plan])[0]

    def apply_all(
        self, plans: list[dict[str, Any]], after_each: Callable[[dict[str, Any]], None] | None = None
    ) -> list[dict[str, Any]]:
        """Commit plans one after another in ONE transaction (`after_each` sees each outcome once,
        after the commit); a transaction cut off by a lost database is replayed whole."""

        def commit() -> tuple[list[dict[str, Any]], dict[str, np.ndarray]]:
            outcomes, changed, rewritten = [], {}, set()
            with self._round() as session:
                for plan in plans:
                    outcome = apply_window(session, plan, self.memory_chars)
                    changed.update(outcome.pop("_changed"))
                    rewritten.update(outcome["evolved"])
                    outcomes.append(outcome)
                changed.update(embed_rewritten(session, sorted(rewritten)))
            return outcomes, changed

        with self._lock:
            outcomes, changed = self._retrying(commit, f"applying a round of {len(plans)} windows")
            self._committed(changed)
            if after_each:
                for outcome in outcomes:
                    after_each(outcome)
        return outcomes
