"""Clustering normalised step labels (paper Sec. 4.1 (ii)): every distinct label is embedded with
MiniLM (L2-normalised), k-means runs for each k of a range with each label weighted by how often it
occurs, and k is the one with the best silhouette (ties: the smaller k). J(k) is reported beside it
for an elbow reading.

The silhouette is computed over distinct labels, not occurrences: a label repeated across many
traces would otherwise add zero-distance pairs that favour the largest k.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans
from sklearn.metrics import silhouette_score
from threadpoolctl import threadpool_limits

from world.errors import RecgraphError

MIN_LABELS = 3
"""Distinct labels needed to compare at least k = 2 (silhouette needs k < labels)."""


@dataclass(frozen=True)
class Clustering:
    """The chosen partition of the distinct labels and the sweep that chose it."""

    labels: tuple[str, ...]
    """The distinct normalised labels, most frequent first."""
    counts: tuple[int, ...]
    """How often each label occurs in the kept traces."""
    vectors: np.ndarray
    """Their MiniLM embeddings (L2-normalised rows)."""
    assignment: np.ndarray
    """Cluster index of each label under the chosen k (clusters numbered by size, largest 0)."""
    k: int
    """The chosen number of clusters."""
    silhouette: dict[int, float]
    """Silhouette of every k tried."""
    inertia: dict[int, float]
    """k-means objective J(k) of every k tried (the elbow curve)."""

    def members(self, cluster: int) -> list[int]:
        """Indices of the labels in `cluster`."""
        return [i for i, c in enumerate(self.assignment) if c == cluster]

    def centroid(self, cluster: int) -> np.ndarray:
        """The count-weighted mean of the cluster's vectors, L2-normalised."""
        rows = self.members(cluster)
        weights = np.array([self.counts[i] for i in rows], dtype=np.float64)
        mean = (self.vectors[rows] * weights[:, None]).sum(axis=0) / weights.sum()
        return mean / (np.linalg.norm(mean) or 1.0)


def k_range(k_min: int, k_max: int, distinct: int) -> range:
    """The k values to try: `k_min..k_max` capped below the number of distinct labels."""
    if k_min < 2 or k_max < k_min:
        raise RecgraphError(f"need 2 <= --k-min <= --k-max, got --k-min {k_min} --k-max {k_max}")
    if distinct < MIN_LABELS:
        raise RecgraphError(
            f"only {distinct} distinct step labels in the kept traces; clustering needs at least "
            f"{MIN_LABELS} (mine more traces, e.g. a larger --users)"
        )
    high = min(k_max, distinct - 1)
    if high < k_min:
        raise RecgraphError(f"--k-min {k_min} needs more than {k_min} distinct step labels, found {distinct}")
    return range(k_min, high + 1)


def _relabel_by_size(assignment: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Number clusters by total occurrences, largest first (ties: lowest original index)."""
    sizes = Counter({int(c): 0 for c in np.unique(assignment)})
    for cluster, count in zip(assignment, counts, strict=True):
        sizes[int(cluster)] += int(count)
    order = sorted(sizes, key=lambda c: (-sizes[c], c))
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[int(c)] for c in assignment])


def cluster_vectors(
    vectors: np.ndarray, counts: Sequence[int], k_min: int, k_max: int, seed: int = 0
) -> tuple[np.ndarray, int, dict[int, float], dict[int, float]]:
    """k-means for every k of the range on `vectors` weighted by `counts`: the chosen assignment
    (the k with the best silhouette; ties: the smaller k), k, and silhouette and inertia per k."""
    weights = np.asarray(counts, dtype=np.float64)
    silhouette: dict[int, float] = {}
    inertia: dict[int, float] = {}
    assignments: dict[int, np.ndarray] = {}
    ks = k_range(k_min, k_max, len(vectors))
    # A few hundred labels at most: one thread is several times faster than BLAS/OpenMP start-up per fit.
    with threadpool_limits(1):
        fits = {
            k: KMeans(n_clusters=k, n_init=10, random_state=seed).fit(vectors, sample_weight=weights)
            for k in ks
        }
    for k, model in fits.items():
        assignments[k] = model.labels_
        score = float(silhouette_score(vectors, model.labels_)) if len(set(model.labels_)) > 1 else -1.0
        silhouette[k], inertia[k] = round(score, 4), round(float(model.inertia_), 4)
    chosen = max(silhouette, key=lambda k: (silhouette[k], -k))
    return _relabel_by_size(assignments[chosen], weights), chosen, silhouette, inertia


def cluster_labels(occurrences: Sequence[str], k_min: int, k_max: int, seed: int = 0) -> Clustering:
    """Embed the distinct labels of `occurrences` with MiniLM and cluster them (see the module)."""
    from world.embeddings import embed_texts

    tally = Counter(label for label in occurrences if label)
    ordered = sorted(tally, key=lambda label: (-tally[label], label))
    counts = [tally[label] for label in ordered]
    vectors = embed_texts(ordered)
    assignment, k, silhouette, inertia = cluster_vectors(vectors, counts, k_min, k_max, seed)
    return Clustering(tuple(ordered), tuple(counts), vectors, assignment, k, silhouette, inertia)
