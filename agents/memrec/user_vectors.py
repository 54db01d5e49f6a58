"""MiniLM embeddings of users' initial (version 0) memories, embedded only when first read.

A run reads the memories of the users its rankings look at (the evaluated users, and those of their
2-hop neighbours that curation cannot rule out without their memory_similarity_score:
agents/memrec/curation.py), not the whole catalog's: on a 50k-user titles-only catalog embedding
every memory up front took minutes before the first user. Each text is embedded on its own
(`world.vector_memo.embed_each`), so a vector depends on the text alone (not on which texts were
read with it, the concurrency or the process), and is kept in this process and in the shared vector
store under RECGRAPH_HOME, so the next run, the ablations and `bench --workers` processes find it.
Users whose memories are the same text share one embedding.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from tools.memrec.graph import initial_user_memories
from world.embeddings import EMBEDDING_DIM
from world.environment import Environment
from world.progress import OPEN, report
from world.vector_memo import embed_each

RESOURCE = "memrec_user_vectors"
"""`Environment.resource` key of the vectors (one copy per dataset, whatever the memory file)."""
PROGRESS_LABEL = "user-memory vectors"
"""The progress row's label (distinct memory texts read so far: an `OPEN` row)."""


class UserVectors:
    """Row i is the L2-normalised MiniLM embedding of `env.user_ids[i]`'s initial memory; indexed
    like the matrix it stands for (`vectors[rows]`, `vectors[row]`), embedding rows on first read."""

    def __init__(self, texts: list[str]) -> None:
        """Nothing is embedded yet; `texts[i]` is user i's initial memory."""
        self.texts = texts
        self.shape = (len(texts), EMBEDDING_DIM)
        self.dtype = np.dtype(np.float32)
        self.ndim = 2
        self._data = np.zeros(self.shape, dtype=np.float32)  # pages are touched only by the rows read
        self._known = np.zeros(len(texts), dtype=bool)
        self._read: set[str] = set()
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self.seconds = 0.0
        """Wall seconds spent reading rows (embedding them or finding them in the vector store)."""

    def __len__(self) -> int:
        """Number of users."""
        return self.shape[0]

    def cached(self) -> int:
        """Rows already in this process."""
        return int(self._known.sum())

    def ready(self, rows: np.ndarray) -> bool:
        """True when every row of `rows` is in this process (reading them embeds nothing)."""
        return bool(self._known[rows].all())

    def __getitem__(self, key: Any) -> np.ndarray:
        """Rows as an array (embedding the missing ones first), indexed like a numpy matrix."""
        rows = np.atleast_1d(np.arange(self.shape[0])[key if not isinstance(key, tuple) else key[0]])
        self.ensure(rows)
        return np.array(self._data[key])

    def ensure(self, rows: np.ndarray) -> None:
        """Embed (or find in the vector store) every row of `rows` not read yet; thread-safe."""
        with self._lock:
            missing = np.unique(np.asarray(rows, dtype=np.int64)[~self._known[rows]])
        if not len(missing):
            return
        with self._reading:  # one read at a time (MiniLM runs one call at a time anyway)
            with self._lock:
                missing = missing[~self._known[missing]]  # another thread may have read them meanwhile
            if not len(missing):
                return
            texts = [self.texts[i] for i in missing]
            started = time.perf_counter()
            vectors = embed_each(texts)
            with self._lock:
                self._data[missing] = vectors
                self._known[missing] = True
                self._read.update(texts)
                worked = time.perf_counter() - started
                self.seconds += worked
                read = len(self._read)
        # On demand (only the rows curation reads are embedded): an open row, whose total is what it
        # read when the harness ends it with its stage. `worked`: reads come between other work
        # (rankings), so the row's span is not its seconds.
        report(PROGRESS_LABEL, read, OPEN, worked=worked)

    def texts_read(self) -> int:
        """Distinct memory texts read so far (embedded, or found in the vector store)."""
        return len(self._read)


def user_vectors(env: Environment) -> UserVectors:
    """The dataset's `UserVectors`, once per process and dataset."""
    return env.resource(RESOURCE, lambda: UserVectors(initial_user_memories(env)))
