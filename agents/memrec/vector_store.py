"""Saved embeddings of the memories Stage W changed, next to their memory-graph file.

After the warm-up the parent process embeds every changed memory once; `bench --workers N` then
ranks in other processes, which would each embed them again (and load MiniLM to do so). The parent
saves them to `<memory file>.vectors.npz` with the digest of the changed rows they belong to (every
(node id, memory text) with version > 0); a process reads them only when its memory graph's changed
rows have that same digest, so a file left from an earlier state of the graph (a resumed run that
applied more jobs) is never read. Workers thus use the parent's exact vectors: their curation is the
same, to the last bit, as one process's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from world.embeddings import EMBEDDING_DIM
from world.item_vectors import save_arrays

SUFFIX = ".vectors.npz"
"""Appended to the memory-graph file's name."""


def vectors_path(memory: Path) -> Path:
    """The saved vectors of the memory-graph file `memory`."""
    return memory.with_name(memory.name + SUFFIX)


def rows_digest(rows: Sequence[tuple[str, str]]) -> str:
    """Digest of changed memory rows (node id, text), whatever their order."""
    digest = hashlib.sha256()
    for node, text in sorted(rows):
        digest.update(f"{node}\x1f{text}\x1e".encode())
    return digest.hexdigest()


def save_vectors(memory: Path, digest: str, texts: Sequence[str], vectors: np.ndarray) -> Path:
    """Save `texts` and their `vectors` for the changed rows with `digest` (atomically); the path."""
    path = vectors_path(memory)
    save_arrays(path, digest=np.array(digest), texts=np.array(list(texts), dtype=str), vectors=vectors)
    return path


def load_vectors(memory: Path, digest: str) -> dict[str, np.ndarray] | None:
    """{text: vector} saved for the changed rows with `digest`; None when there is no such file or
    it belongs to other rows (stale) or is malformed."""
    path = vectors_path(memory)
    if not path.is_file():
        return None
    with np.load(path, allow_pickle=False) as saved:
        if str(saved["digest"]) != digest:
            return None
        texts, vectors = saved["texts"], saved["vectors"]
    if vectors.shape != (len(texts), EMBEDDING_DIM):
        return None
    return {
        str(text): np.asarray(vector, dtype=np.float32) for text, vector in zip(texts, vectors, strict=True)
    }
