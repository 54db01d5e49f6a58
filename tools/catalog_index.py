"""The catalog item index in Chroma (persistent, explicit MiniLM embedding function), and the recall
stage every retrieval from the whole catalog goes through (`recall_set`)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from tools.similarity import similarity_order
from tools.user_context import SESSION_ITEMS, context_vector, recall_top, split_context, user_split
from world.data import Dataset
from world.environment import Environment
from world.item_vectors import text_fingerprint
from world.paths import cache_root, dataset_key
from world.progress import report

ArrayLike = Any
"""A matrix indexed by row slices: an ndarray or `world.item_vectors.ItemVectors`."""


def item_metadata(dataset: Dataset, item_id: str) -> dict[str, Any]:
    """Filterable metadata: year (int when numeric) and one boolean flag per category."""
    item = dataset.items[item_id]
    metadata: dict[str, Any] = {"title": item.title, "categories": "|".join(item.categories)}
    year = item.attributes.get("year", "")
    if year.isdigit():
        metadata["year"] = int(year)
    for category in item.categories:
        metadata[f"cat:{category}"] = True
    return metadata


PROGRESS_LABEL = "catalog index"
"""The progress row of filling a catalog's Chroma collection (once per dataset content)."""


def collection_name(dataset: Dataset, item_ids: Sequence[str]) -> str:
    """The catalog's collection: named by the dataset (name and source) and a digest of its items'
    ids and texts, so a dataset rewritten in place gets a fresh index, never a stale one."""
    texts = [f"{i}\x1f{dataset.items[i].text()}\x1f{'|'.join(dataset.items[i].categories)}" for i in item_ids]
    digest = hashlib.sha256(f"{dataset_key(dataset)}\x1e{text_fingerprint(texts)}".encode()).hexdigest()
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", dataset.name).strip("-_")[:30] or "dataset"
    return f"catalog-{slug}-{digest[:12]}"  # Chroma allows at most 63 characters


class CatalogIndex:
    """Nearest-neighbour search over a dataset's items with metadata filters."""

    def __init__(self, dataset: Dataset, item_ids: Sequence[str], vectors: ArrayLike) -> None:
        """Open (or fill, once per dataset content) the dataset's persistent collection; `vectors`
        (row i for `item_ids[i]`) are read only when the collection has to be filled."""
        import chromadb  # here, not at import: graphs that never retrieve never load Chroma
        from chromadb.config import Settings

        from tools.chroma_minilm import MiniLMEmbeddingFunction

        client = chromadb.PersistentClient(
            path=str(cache_root() / "chroma"),
            settings=Settings(anonymized_telemetry=False, allow_reset=False),
        )
        self.collection = client.get_or_create_collection(
            name=collection_name(dataset, item_ids),
            embedding_function=MiniLMEmbeddingFunction(),
            configuration={"hnsw": {"space": "cosine"}},
        )
        if self.collection.count() != len(item_ids):
            self._fill(dataset, item_ids, vectors)

    def _fill(self, dataset: Dataset, item_ids: Sequence[str], vectors: ArrayLike) -> None:
        batch = 1000
        report(PROGRESS_LABEL, 0, len(item_ids))
        for start in range(0, len(item_ids), batch):
            ids = list(item_ids[start : start + batch])
            self.collection.upsert(
                ids=ids,
                embeddings=np.asarray(vectors[start : start + batch], dtype=np.float32),
                documents=[dataset.items[i].text() for i in ids],
                metadatas=[item_metadata(dataset, i) for i in ids],
            )
            report(PROGRESS_LABEL, start + len(ids), len(item_ids))

    def search(self, query: str | np.ndarray, k: int, where: dict[str, Any] | None = None) -> list[str]:
        """Ids of the `k` items closest to a text or an embedding, optionally filtered."""
        if isinstance(query, str):
            result = self.collection.query(query_texts=[query], n_results=k, where=where)
        else:
            result = self.collection.query(
                query_embeddings=[np.asarray(query, dtype=np.float32)], n_results=k, where=where
            )
        return list(result["ids"][0])


def catalog_index(env: Environment) -> CatalogIndex:
    """The dataset's Chroma catalog index (built on first use, persistent after, one per process)."""
    return env.resource("catalog_index", lambda: CatalogIndex(env.dataset, env.item_ids, env.item_vectors()))


def unseen_items(env: Environment, history: Sequence[str]) -> list[str]:
    """Catalog items not in the visible history: the pool for retrieve mode."""
    seen = set(history)
    return [item for item in env.item_ids if item not in seen]


def recall_set(
    env: Environment, long_term: Sequence[str], session: Sequence[str], k: int, exclude: Collection[str]
) -> list[str]:
    """The recall stage I⁰ = argtop_k cos(f_Emb(i), f_Emb(u)) (ARAG 4.2.1), for the user context
    u = (`long_term`, `session`) (`tools.user_context`), over the catalog minus `exclude`: an exact
    full scan, ties in catalog order, so it is deterministic. Without a context (no history), the `k`
    most popular items not excluded. The benchmark's `retrieval` candidate source, ARAG's retrieve mode
    and every other method's retrieve mode (`retrieve_candidates`) all call this one function."""
    query = context_vector(env, long_term, session)
    if query is None:
        return similarity_order(env, [], [item for item in env.item_ids if item not in exclude])[:k]
    return recall_top(env, query, k, set(exclude))


def retrieve_candidates(
    env: Environment, history: Sequence[str], k: int, user_id: str | None = None
) -> list[str]:
    """Retrieve mode: `recall_set` for the user context of `history`, the history left out. The
    session is split by time when `user_id` is given and the dataset has timestamps, else it is the
    last `SESSION_ITEMS` items."""
    if user_id is None:
        context = split_context(history, SESSION_ITEMS)
    else:
        context = user_split(env, user_id, history, SESSION_ITEMS)
    return recall_set(env, *context, k, set(history))
