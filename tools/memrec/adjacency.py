"""The training graph MemRec's memory graph sits on: user->items and item->users CSR adjacency with
each edge's timestamp and weight. It depends on the dataset only, so it is built once per process and
dataset and shared by every memory-graph file (a method and its ablations each have their own file).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from world.environment import Environment


def latest_edges(env: Environment, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """The training (user, item) pairs as keys user * n_items + item, ascending, and the
    (timestamp, weight) of each: the latest interaction of a repeated pair wins; weight is the
    rating, 1.0 without one."""
    users, items, stamps = [], [], []
    for user, case in env.cases.items():
        u = env.user_index[user]
        for e in case.history:  # oldest first
            users.append(u)
            items.append(env.item_index[e.item_id])
            stamps.append((e.timestamp, 1.0 if e.rating is None else e.rating))
    keys = np.asarray(users, dtype=np.int64) * n_items + np.asarray(items, dtype=np.int64)
    values = np.asarray(stamps, dtype=np.float64).reshape(-1, 2)
    # np.unique keeps a key's first position: in the reversed order, that is its latest interaction.
    unique, first = np.unique(keys[::-1], return_index=True)
    return unique, values[::-1][first]


@dataclass(frozen=True)
class Adjacency:
    """The training graph as user->items and item->users CSR arrays (read-only, shared by every
    memory-graph file of a dataset)."""

    user_ptr: np.ndarray
    """CSR row pointers over users (`env.user_ids` order)."""
    user_items: np.ndarray
    """Item index of each user->item edge (sorted within a user)."""
    user_item_times: np.ndarray
    """Timestamp of each user->item edge (the latest interaction of a repeated pair)."""
    user_item_weights: np.ndarray
    """Weight of each user->item edge (the rating, 1.0 without one)."""
    item_ptr: np.ndarray
    """CSR row pointers over items."""
    item_users: np.ndarray
    """User index of each item->user edge (sorted within an item)."""
    item_user_times: np.ndarray
    """Timestamp of each item->user edge."""
    item_user_weights: np.ndarray
    """Weight of each item->user edge."""


def build_adjacency(env: Environment) -> Adjacency:
    """The training graph's CSR adjacency, checked against the training histories."""
    matrix = env.train_matrix.tocsr(copy=True)
    matrix.sort_indices()
    rows = np.repeat(np.arange(matrix.shape[0]), np.diff(matrix.indptr))
    keys, edges = latest_edges(env, matrix.shape[1])
    if not np.array_equal(keys, rows.astype(np.int64) * matrix.shape[1] + matrix.indices):
        raise ValueError("the training matrix and the training histories disagree on the edges")
    order = np.lexsort((rows, matrix.indices))  # by item, then user
    item_ptr = np.concatenate(([0], np.cumsum(np.bincount(matrix.indices, minlength=matrix.shape[1]))))
    return Adjacency(
        matrix.indptr, matrix.indices, edges[:, 0], edges[:, 1],
        item_ptr, rows[order], edges[order, 0], edges[order, 1],
    )  # fmt: skip


def shared_adjacency(env: Environment) -> Adjacency:
    """`build_adjacency`, once per process and dataset (every memory graph of it shares it)."""
    return env.resource("memrec_adjacency", lambda: build_adjacency(env))
