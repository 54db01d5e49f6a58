"""MemRec's feature index: what computing the curation features (features.py) needs, built once per
dataset and memory-graph file: the dataset's shared arrays (agents/memrec/dataset_features.py) and
the memories' MiniLM embeddings, initial ones read when first needed and changed ones embedded on
first sight, cached by text and shared with other processes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np

from agents.memrec.dataset_features import dataset_features
from agents.memrec.user_vectors import UserVectors, user_vectors
from agents.memrec.vector_store import load_vectors, rows_digest, save_vectors
from tools.memrec.graph import MemoryGraph, user_node
from world.embeddings import EMBEDDING_DIM
from world.environment import Environment
from world.vector_memo import embed_batch


class FeatureIndex:
    """Everything feature computation needs, built once per dataset (see `feature_index`)."""

    def __init__(self, env: Environment, graph: MemoryGraph) -> None:
        """Take the dataset's shared arrays (`dataset_features`) and the initial memory embeddings."""
        self.env, self.graph = env, graph
        shared = dataset_features(env)
        self.x, self.degree, self.edge_weight = shared.x, shared.degree, shared.edge_weight
        self.clock = shared.clock
        self.categories, self.item_categories = shared.categories, shared.item_categories
        self.item_dist, self.user_dist = shared.item_dist, shared.user_dist
        self.item_vectors = shared.item_vectors
        self.user_vectors = self._initial_user_vectors()
        self.item_nodes, self.user_nodes = shared.item_nodes, shared.user_nodes
        self._by_text: dict[str, np.ndarray] = {}
        self._seen: dict[object, tuple[object, dict[str, np.ndarray]]] = {}
        self._lock = threading.Lock()

    def _initial_user_vectors(self) -> UserVectors:
        """Embeddings of users' initial (version 0) memories, each embedded when first read
        (agents/memrec/user_vectors.py, shared by every memory file); later versions: `updated_vectors`."""
        return user_vectors(self.env)

    def embed_memories(self, texts: Sequence[str]) -> int:
        """Embed the memory texts not embedded yet, in one batch (first embedding of a text wins);
        returns how many were new. Stage W's warm-up calls it ahead of time with the memories its
        proposals will most likely produce, so `updated_vectors` finds them ready."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._by_text))
        if not missing:
            return 0
        vectors = embed_batch(missing)  # remembered: an ablation's identical Stage W batch is found
        with self._lock:
            for text, vector in zip(missing, vectors, strict=True):
                self._by_text.setdefault(text, vector.astype(np.float32))
        return len(missing)

    def updated_vectors(self) -> dict[str, np.ndarray]:
        """Embeddings of every node whose memory changed since seeding (cached by text).

        The query runs only when the memory changed since this slot last looked (SQLite: the
        thread's connection, by data_version and total_changes; PostgreSQL: see `change_stamp`)."""
        slot, stamp = self.graph.change_stamp()
        cached = self._seen.get(slot)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        rows = self.graph.changed_rows()
        with self._lock:
            missing = [text for _, text in rows if text not in self._by_text]
        if missing:  # the vectors the warm-up saved for exactly these rows, when there are some
            saved = self._saved_vectors(rows, missing)
            with self._lock:
                for text, vector in saved.items():
                    self._by_text.setdefault(text, vector)
            missing = [text for text in missing if text not in saved]
        if self.embed_memories(missing) and self.graph.shared:
            self._share_vectors(missing)
        found = {node: self._by_text[text] for node, text in rows}
        self._seen[slot] = (stamp, found)
        return found

    def _saved_vectors(self, rows: list[tuple[str, str]], missing: list[str]) -> dict[str, np.ndarray]:
        """Vectors another process saved: in a shared database, by text (so a process with another
        RECGRAPH_HOME reads them too); with SQLite, the file next to the memory, by rows digest."""
        if self.graph.shared:
            return self.graph.store.saved_vectors(missing)
        return load_vectors(self.graph.path, rows_digest(rows)) or {}

    def _share_vectors(self, texts: list[str]) -> None:
        """Save this process's new vectors of `texts` to the shared database and adopt whichever
        vector of each text was saved first, so every process ranks with the same bits."""
        with self._lock:
            mine = [t for t in dict.fromkeys(texts) if t in self._by_text]
            vectors = [self._by_text[t] for t in mine]
        if mine:
            self.graph.store.save_vectors(mine, np.stack(vectors))
            first = self.graph.store.saved_vectors(mine)
            with self._lock:
                self._by_text.update(first)

    def save_updated_vectors(self, on_progress: Callable[[int, int], None] | None = None) -> int:
        """Save the changed memories' vectors for other processes (`bench --workers`): next to the
        memory-graph file, keyed by the digest of the changed rows (agents/memrec/vector_store.py),
        or in the shared database by text; returns how many were saved. `on_progress(done, total)`
        is told before the embedding and after the saving, in changed texts."""
        rows = self.graph.changed_rows()
        texts = list(dict.fromkeys(text for _, text in rows))
        if on_progress:
            on_progress(0, len(texts))
        self.embed_memories(texts)
        vectors = np.stack([self._by_text[t] for t in texts]) if texts else np.zeros((0, EMBEDDING_DIM))
        if self.graph.shared:
            self._share_vectors(texts)
        else:
            save_vectors(self.graph.path, rows_digest(rows), texts, vectors.astype(np.float32))
        if on_progress:
            on_progress(len(texts), len(texts))
        return len(texts)

    def user_vector(self, user_id: str, updated: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """MiniLM embedding of a user's current memory."""
        node = user_node(user_id)
        if updated and node in updated:
            return updated[node]
        return self.user_vectors[self.env.user_index[user_id]]

    def candidate_distribution(self, candidates: Sequence[str]) -> np.ndarray:
        """Mean category distribution of the candidates."""
        rows = [self.env.item_index[c] for c in candidates]
        return self.item_dist[rows].mean(axis=0) if rows else np.zeros(len(self.categories))


def feature_index(env: Environment, memory: str = "") -> FeatureIndex:
    """The process-wide `FeatureIndex` of a dataset over the memory graph file `memory` (empty: the
    dataset's default file), built on first use."""
    graph = env.resource(f"memrec_graph:{memory}", lambda: MemoryGraph.open(env, memory or None))
    return env.resource(f"memrec_features:{memory}", lambda: FeatureIndex(env, graph))
