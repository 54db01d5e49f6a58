"""The vectorised arithmetic of MemRec's curation features (agents/memrec/features.py)."""

from __future__ import annotations

import numpy as np

from world.item_vectors import ItemVectors

DOT_BLOCK = 256
"""Rows per matrix-vector block in `dot_rows` (kept small enough to stay single-threaded)."""


def overlap(rows: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """0.5 * Ruzicka(row, first) + 0.5 * Ruzicka(row, second) for every row (0 where both are empty).

    Ruzicka(a, b) = sum min / sum max, and sum max = sum a + sum b - sum min.
    """
    targets = np.stack([first, second])
    low = np.minimum(rows[:, None, :], targets[None]).sum(axis=2)
    high = rows.sum(axis=1)[:, None] + targets.sum(axis=1)[None] - low
    ratio = np.divide(low, high, out=np.zeros_like(low), where=high > 0)
    return 0.5 * ratio[:, 0] + 0.5 * ratio[:, 1]


def dot_rows(matrix: np.ndarray | ItemVectors, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """`matrix[rows] @ vector`, in blocks of `DOT_BLOCK` rows.

    OpenBLAS runs larger matrix-vector products multithreaded, which on a busy machine costs
    milliseconds instead of microseconds; blocks this small always run on the calling thread.
    Lazy item vectors are read by the rows asked for only (a slice would embed the rows between).
    """
    out = np.empty(len(rows), dtype=np.float64)
    for start in range(0, len(rows), DOT_BLOCK):
        block = rows[start : start + DOT_BLOCK]
        lo, hi = int(block.min()), int(block.max()) + 1
        if isinstance(matrix, np.ndarray) and hi - lo <= 2 * DOT_BLOCK:  # a dense run: a view, no copy
            out[start : start + len(block)] = (matrix[lo:hi] @ vector)[block - lo]
        else:
            out[start : start + len(block)] = matrix[block] @ vector
    return out
