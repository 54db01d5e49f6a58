"""The part of MemRec's feature index that depends on the dataset only (not on a memory-graph file):
recency-weighted edge weights, the edges' clock (timestamps, or order read in days on order-only
data: agents/memrec/order_clock.py), category distributions, item vectors and node ids. Built once per
process and dataset and shared by every `FeatureIndex` (a method and each ablation has its own
memory file), so a bench run can build it before the warm-up starts (graphs/memrec/preload.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from agents.memrec.order_clock import EdgeClock, edge_clock
from tools.memrec.adjacency import shared_adjacency
from tools.memrec.graph import item_node, user_node
from world.environment import Environment
from world.item_vectors import ItemVectors

RECENCY_HALF_LIFE_ITEMS = 20.0
"""An interaction's edge weight halves for every 20 later interactions of the same user."""
MAX_CATEGORIES = 512
"""Category distributions keep the most frequent categories only (bounded memory on big catalogs)."""


def later_interactions(user_ptr: np.ndarray, times: np.ndarray) -> np.ndarray:
    """For each edge of the user-major CSR adjacency, how many of its user's edges are newer (ties:
    the earlier edge in the adjacency counts as newer, as a stable sort by descending time)."""
    n = len(times)
    owner = np.repeat(np.arange(len(user_ptr) - 1), np.diff(user_ptr))
    order = np.lexsort((np.arange(n), -times, owner))
    later = np.empty(n)
    later[order] = np.arange(n) - user_ptr[owner[order]]
    return later


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row divided by its sum (rows summing to 0 stay 0)."""
    total = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, total, out=np.zeros_like(matrix), where=total > 0)


def category_matrix(env: Environment) -> tuple[list[str], np.ndarray]:
    """The `MAX_CATEGORIES` most frequent categories and the items x categories 0/1 matrix."""
    items = env.dataset.items
    counts = Counter(c for i in env.item_ids for c in items[i].categories)
    names = [c for c, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CATEGORIES]]
    column = {c: j for j, c in enumerate(names)}
    matrix = np.zeros((len(env.item_ids), len(names)))
    for row, item in enumerate(env.item_ids):
        for c in items[item].categories:
            if c in column:
                matrix[row, column[c]] = 1.0
    return names, matrix


@dataclass(frozen=True)
class DatasetFeatures:
    """Dataset-only arrays of the feature index (see `dataset_features`)."""

    x: sparse.csr_matrix
    """The users x items training matrix."""
    degree: np.ndarray
    """Training interactions per user (float)."""
    edge_weight: np.ndarray
    """Recency-weighted strength of each user->item edge (user-major adjacency order)."""
    clock: EdgeClock
    """Each edge's time as recency_days reads it (order-only data: positions at the median pace)."""
    categories: list[str]
    """Category names, most frequent first (columns of the distributions)."""
    item_categories: np.ndarray
    """Items x categories, 0/1."""
    item_dist: np.ndarray
    """Each item's category distribution (uniform over its categories)."""
    user_dist: np.ndarray
    """Each user's training-history category distribution."""
    item_vectors: np.ndarray | ItemVectors
    """MiniLM item vectors: a plain matrix when the dataset's cache is complete, else lazily embedded."""
    item_nodes: np.ndarray
    """Memory-graph node id of every item (object array, `env.item_ids` order)."""
    user_nodes: np.ndarray
    """Memory-graph node id of every user (object array, `env.user_ids` order)."""


def build_dataset_features(env: Environment) -> DatasetFeatures:
    """Compute the dataset-only arrays (see the module docstring)."""
    graph = shared_adjacency(env)
    weights = graph.user_item_weights
    strength = weights / (weights.max() if weights.size and weights.max() > 0 else 1.0)
    later = later_interactions(graph.user_ptr, graph.user_item_times)
    names, item_categories = category_matrix(env)
    x = env.train_matrix.tocsr()
    vectors = env.item_vectors()
    # A complete cache is used as a plain matrix; otherwise rows are embedded when first read
    # (a run embeds the items its users touch, not the catalog).
    item_vectors: np.ndarray | ItemVectors = (
        np.ascontiguousarray(vectors, dtype=np.float32) if vectors.cached() == len(vectors) else vectors
    )
    return DatasetFeatures(
        x=x,
        degree=np.diff(graph.user_ptr).astype(np.float64),
        edge_weight=strength * 0.5 ** (later / RECENCY_HALF_LIFE_ITEMS),
        clock=edge_clock(env.dataset.has_time, graph, later),
        categories=names,
        item_categories=item_categories,
        item_dist=normalise_rows(item_categories),
        user_dist=normalise_rows(np.asarray(x @ item_categories)),
        item_vectors=item_vectors,
        item_nodes=np.array([item_node(i) for i in env.item_ids], dtype=object),
        user_nodes=np.array([user_node(u) for u in env.user_ids], dtype=object),
    )


def dataset_features(env: Environment) -> DatasetFeatures:
    """`build_dataset_features`, once per process and dataset."""
    return env.resource("memrec_dataset_features", lambda: build_dataset_features(env))
