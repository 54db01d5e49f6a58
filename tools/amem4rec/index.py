"""The Chroma side of an AMEM4Rec pool: a persistent collection in cosine space with our MiniLM
embedding function given explicitly (Chroma's ONNX default never loads).

Contract: it mirrors the pool's SQLite record — one entry per memory with the memory's text as the
document, its embedding, and metadata (version, evolution_count, created_user, created_window,
created_at, updated_at); `sync` repairs any drift (a crash between the two writes), `nearest`
returns candidate ids for the pool's exact re-scoring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from world.errors import RecgraphError

if TYPE_CHECKING:
    from tools.amem4rec.record import Memory


class PoolError(RecgraphError):
    """A pool folder that cannot be used as asked (other dataset, damaged, unknown memory id)."""


COLLECTION = "amem4rec_pool"
CHROMA_DIR = "chroma"
RowFetcher = Callable[[list[str]], tuple[list["Memory"], list[np.ndarray]]]
"""Gives the memories and embeddings of ids, in that order (from the SQLite record)."""


def metadata(memory: Memory) -> dict[str, Any]:
    """The Chroma metadata of one memory."""
    return {
        "version": memory.version,
        "evolution_count": memory.evolution_count,
        "created_user": memory.created_user,
        "created_window": memory.created_window,
        "created_at": memory.created_at,
        "updated_at": memory.updated_at,
    }


class PoolIndex:
    """The pool's persistent Chroma collection."""

    def __init__(self, folder: Path) -> None:
        """Open (or create) the collection under `folder/chroma`."""
        import chromadb
        from chromadb.config import Settings

        from tools.chroma_minilm import MiniLMEmbeddingFunction

        try:
            client = chromadb.PersistentClient(
                path=str(folder / CHROMA_DIR),
                settings=Settings(anonymized_telemetry=False, allow_reset=False),
            )
            self.client = client
            self.collection = client.get_or_create_collection(
                name=COLLECTION,
                embedding_function=MiniLMEmbeddingFunction(),
                configuration={"hnsw": {"space": "cosine", "ef_search": 200, "ef_construction": 200}},
            )
        except Exception as error:  # Chroma raises many kinds on a damaged folder; all mean the same here
            raise PoolError(
                f"pool folder {folder} is damaged: its Chroma index does not open ({error})"
            ) from None

    def close(self) -> None:
        """Release the collection's Chroma system. Chroma shares one per path in the process: left
        open, a pool reopened at the same path after its folder was deleted or rebuilt would get
        the old system back, whose segments are gone ("Failed to get segments")."""
        self.client.close()

    def sync(self, versions: dict[str, int], fetch: RowFetcher) -> int:
        """Make the collection match the record (`versions`: id -> version); returns entries fixed."""
        stored = self.collection.get(include=["metadatas"])
        seen = {
            i: (m or {}).get("version")
            for i, m in zip(stored["ids"], stored["metadatas"] or [], strict=False)
        }
        stale = sorted(i for i, v in versions.items() if seen.get(i) != v)
        extra = sorted(set(seen) - set(versions))
        if extra:
            self.collection.delete(ids=extra)
        for start in range(0, len(stale), 500):
            rows, vectors = fetch(stale[start : start + 500])
            self.upsert(rows, vectors)
        return len(stale) + len(extra)

    def upsert(self, memories: Sequence[Memory], vectors: Sequence[np.ndarray]) -> None:
        """Write memories (text, embedding, metadata)."""
        if not memories:
            return
        self.collection.upsert(
            ids=[m.id for m in memories],
            embeddings=np.asarray(vectors, dtype=np.float32),
            documents=[m.text() for m in memories],
            metadatas=[metadata(m) for m in memories],
        )

    def nearest(self, vector: np.ndarray, n: int) -> list[str]:
        """Ids of about the `n` nearest memories (approximate; the pool re-scores them exactly)."""
        if n <= 0:
            return []
        result = self.collection.query(query_embeddings=[np.asarray(vector, dtype=np.float32)], n_results=n)
        return list(result["ids"][0])
