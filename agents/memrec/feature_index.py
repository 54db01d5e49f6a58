"""MemRec's feature index: what computing the curation features (features.py) needs, built once per
dataset and memory-graph file: the dataset's shared arrays (agents/memrec/dataset_features.py) and
the memories' MiniLM embeddings, initial ones and changed ones each embedded when first read, cached by
text and shared with other processes."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence

import numpy as np

from agents.memrec.changed_vectors import ChangedVectors
from agents.memrec.dataset_features import dataset_features
from agents.memrec.user_vectors import UserVectors, user_vectors
from tools.memrec.graph import MemoryGraph, user_node
from world.environment import Environment
from world.vector_memo import embed_each


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
        self._seen: dict[object, tuple[object, ChangedVectors]] = {}
        self._lock = threading.Lock()
        self.changed_read = 0
        """Changed memory texts embedded (or found saved) by this index so far."""
        self.changed_seconds = 0.0
        """Wall seconds spent on them."""

    def _initial_user_vectors(self) -> UserVectors:
        """Embeddings of users' initial (version 0) memories, each embedded when first read
        (agents/memrec/user_vectors.py, shared by every memory file); later versions: `updated_vectors`."""
        return user_vectors(self.env)

    def embed_memories(self, texts: Sequence[str]) -> int:
        """Embed the memory texts not embedded yet, each on its own (`embed_each`: a vector depends
        on its text alone); returns how many were new. In a shared database, vectors another
        process saved are taken first and new ones saved. Stage W's warm-up calls it ahead of time
        with the memories its proposals will most likely produce (graphs/memrec/overlap.py)."""
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._by_text))
        if not missing:
            return 0
        started = time.perf_counter()
        found = self.graph.store.saved_vectors(missing) if self.graph.shared else {}
        new = [text for text in missing if text not in found]
        found.update(zip(new, embed_each(new), strict=True))
        if new and self.graph.shared:
            self.graph.store.save_vectors(new, np.stack([found[t] for t in new]))
        with self._lock:
            for text in missing:
                self._by_text.setdefault(text, np.asarray(found[text], dtype=np.float32))
            self.changed_read += len(missing)
            self.changed_seconds += time.perf_counter() - started
        return len(missing)

    def _vectors_of(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """{text: vector} of changed memories, embedding those not embedded yet."""
        self.embed_memories(texts)
        with self._lock:
            return {text: self._by_text[text] for text in texts}

    def updated_vectors(self) -> ChangedVectors:
        """Embeddings of every node whose memory changed since seeding, each embedded when first
        read (agents/memrec/changed_vectors.py).

        The query runs only when the memory changed since this slot last looked (SQLite: the
        thread's connection, by data_version and total_changes; PostgreSQL: see `change_stamp`)."""
        slot, stamp = self.graph.change_stamp()
        cached = self._seen.get(slot)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        found = ChangedVectors(dict(self.graph.changed_rows()), self._vectors_of)
        self._seen[slot] = (stamp, found)
        return found

    def user_vector(self, user_id: str, updated: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
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
