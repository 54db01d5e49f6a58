"""MemRec's collaborative signals for the Vector ranker (agents/memrec/rerank.py): who interacted
with which candidate, item-item co-occurrence, and weighted mean profiles; computed from row slices
of the item x user training matrix (binary, so every sum is exact whatever the order)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import sparse

from agents.memrec.feature_index import FeatureIndex


def item_user_matrix(index: FeatureIndex) -> sparse.csr_matrix:
    """The training matrix transposed (items x users, CSR), built once per dataset."""
    return index.env.resource("memrec_xt", lambda: sparse.csr_matrix(index.x.T))


def interacted(index: FeatureIndex, users: np.ndarray, items: np.ndarray) -> np.ndarray:
    """users x items, 1.0 where the user has a training interaction with the item (dense)."""
    return item_user_matrix(index)[items][:, users].toarray().T.astype(np.float64)


def cosine_cooccurrence(index: FeatureIndex, item_rows: np.ndarray, candidates: Sequence[str]) -> np.ndarray:
    """Item-item cosine of training co-occurrence between `item_rows` and the candidates (n x c)."""
    cols = [index.env.item_index[c] for c in candidates]
    xt = item_user_matrix(index)
    # Row slices of the item x user matrix: column slices of the user x item one cost twice as much.
    co = (xt[item_rows] @ xt[cols].T).toarray().astype(np.float64)
    deg = index.env.resource("memrec_item_degree", lambda: np.asarray(index.x.sum(axis=0)).ravel())
    norm = np.sqrt(np.outer(deg[item_rows], deg[cols]))
    return np.divide(co, norm, out=np.zeros_like(co), where=norm > 0)


def mean_unit(vectors: np.ndarray, weights: np.ndarray) -> np.ndarray | None:
    """Normalised weighted mean of row vectors (None when there are none or all weights are 0)."""
    if not len(vectors) or not math.isfinite(float(weights.sum())) or weights.sum() <= 0:
        return None
    mean = (weights[:, None] * vectors).sum(axis=0)
    norm = np.linalg.norm(mean)
    return mean / norm if norm > 0 else None
