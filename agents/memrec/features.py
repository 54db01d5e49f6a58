"""MemRec's curation features, computed for real and vectorised over a user's 1- and 2-hop neighbourhood.

Neighbours of user u in the training graph: the items u interacted with (1 hop) and the users
sharing at least one of them (2 hops). Each neighbour gets the five `FEATURES` (column order of
`agents.memrec.rule_scoring.score_neighbours`):

- edge_weight: recency-weighted interaction strength in [0, 1]. An edge (u, i) is worth
  rating / max rating (1 without ratings) times 0.5 ** (later / RECENCY_HALF_LIFE_ITEMS), where
  `later` counts u's interactions after it (agents/memrec/dataset_features.py, shared by every
  memory file of a dataset). Item neighbours take their edge's value; a user
  neighbour v takes the recency-weighted cosine sum_{i shared} w(u, i) / sqrt(|I_u| |I_v|).
- recency_days: days between the neighbour's interaction (an item: u's interaction with it; a
  user: v's latest interaction with a shared item) and u's latest training interaction. Without
  timestamps, positions read in days at the dataset's median pace (agents/memrec/order_clock.py).
- co_interaction_count: users: items shared with u; items: co-occurrences with the rest of u's
  (visible) history, i.e. over other users, the sum of (has the item) x (number of u's other
  items they interacted with). Eq. 2 scores neighbours without the candidates, and so does this
  default; `memrec_curation = "candidates"` (our variant, graphs/memrec/FIDELITY.md) counts
  co-occurrences with the candidates instead: over other users, (has the item) x (number of
  candidates they interacted with).
- metadata_overlap_score: Ruzicka(d_n, d_u), where d are category distributions (an item: its
  categories, uniform; a user: their training history's), Ruzicka(a, b) = sum min / sum max (a
  weighted Jaccard); the candidate-aware variant takes 0.5 * Ruzicka(d_n, d_candidates) +
  0.5 * Ruzicka(d_n, d_u), d_candidates the candidates' mean.
- memory_similarity_score: cosine (clipped at 0) of MiniLM embeddings of the neighbour's memory
  and u's memory. Unchanged item memories reuse `Environment.item_vectors()`; initial user
  memories are embedded when first read (agents/memrec/user_vectors.py), and curation reads a user
  neighbour's only when the other four features leave it a chance of the top k
  (agents/memrec/similarity_reads.py); memories Stage W changed are embedded when first read
  (agents/memrec/changed_vectors.py: every changed item neighbour, a changed user neighbour only
  while it may still rank; or ahead of time by Stage W's warm-up) and cached by text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agents.memrec.feature_index import FeatureIndex
from agents.memrec.feature_math import dot_rows, overlap
from agents.memrec.order_clock import SECONDS_PER_DAY

CURATION_NEEDS = {"metadata_overlap_score": "categories", "recency_days": "timestamps"}
"""Curation features and the dataset field each needs: without categories metadata_overlap_score is
0 for every neighbour (memory_similarity_score, MiniLM over titles and memories, remains); without
timestamps recency_days reads interaction order in days (agents/memrec/order_clock.py)."""


@dataclass(frozen=True)
class NeighbourFeatures:
    """The scored-to-be neighbourhood of one user for one candidate set."""

    node_ids: np.ndarray
    """Memory-graph node ids (object array): items ("i:<id>") first, then users ("u:<id>")."""
    is_item: np.ndarray
    """True for item neighbours (bool, one per node)."""
    index: np.ndarray
    """Environment index of each node (item index or user index)."""
    matrix: np.ndarray
    """n x 5 features in `FEATURES` order (NaN: a memory_similarity_score not read yet)."""
    user_vector: np.ndarray
    """The target user's memory embedding (what memory_similarity_score compares with)."""
    changed: np.ndarray
    """True for user neighbours whose memory Stage W changed (read from `updated`, not the initial
    memories' vectors)."""
    updated: Mapping[str, np.ndarray]
    """The changed memories' vectors (`FeatureIndex.updated_vectors`), each embedded on first read."""


def _own_edges(index: FeatureIndex, u: int, visible: Sequence[str] | None) -> tuple[np.ndarray, ...]:
    """User u's training edges (items, clock times, edge weights), limited to `visible` items when given."""
    graph = index.graph
    lo, hi = graph.user_ptr[u], graph.user_ptr[u + 1]
    items, times, ew = graph.user_items[lo:hi], index.clock.user_times[lo:hi], index.edge_weight[lo:hi]
    if visible is not None:
        keep = np.isin(items, [index.env.item_index[i] for i in visible if i in index.env.item_index])
        items, times, ew = items[keep], times[keep], ew[keep]
    return items.astype(np.int64), times, ew


def neighbour_features(
    index: FeatureIndex,
    user_id: str,
    candidates: Sequence[str],
    hops: int = 2,
    visible: Sequence[str] | None = None,
    user_similarity: bool = True,
    candidate_aware: bool = False,
) -> NeighbourFeatures:
    """The five features of every 1-hop item and (hops=2) 2-hop user of `user_id`; the candidates
    enter them only when `candidate_aware` (module docstring).

    `visible` (the scenario's visible history) limits the 1-hop items, so scenarios that hide
    part of the history (cold_user, evolving_*) do not leak it through the neighbourhood.
    `user_similarity=False` leaves the memory_similarity_score of user neighbours with an unchanged
    memory NaN, to be read for the rows that need it (`read_user_similarity`).
    """
    env, graph = index.env, index.graph
    env.require_user(user_id)
    u = env.user_index[user_id]
    items, times, ew = _own_edges(index, u, visible)
    anchor = float(times.max()) if times.size else 0.0
    updated = index.updated_vectors()
    uvec = index.user_vector(user_id, updated)
    d_user = index.user_dist[u]
    if visible is not None:  # the profile of what is visible, not of the whole training history
        counts = index.item_categories[items].sum(axis=0)
        d_user = counts / counts.sum() if counts.sum() > 0 else np.zeros_like(counts)
    d_cand = index.candidate_distribution(candidates) if candidate_aware else d_user
    # Every (shared item, other user) edge at once.
    starts, ends = graph.item_ptr[items], graph.item_ptr[items + 1]
    lengths = ends - starts
    group = np.repeat(np.arange(len(items)), lengths)
    flat = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(lengths.sum())
    who, when = graph.item_users[flat], index.clock.item_times[flat]
    if candidate_aware:
        per_user = _candidates_per_user(index, candidates)
    else:  # each other user's count of u's items, less the item itself: co-occurrence with the rest
        per_user = np.bincount(who, minlength=len(index.degree)).astype(np.float64) - 1.0
    per_user[u] = 0.0
    co_items = np.bincount(group, weights=per_user[who], minlength=len(items))
    item_rows = index.item_dist[items]
    item_x = np.column_stack(
        [
            ew,
            np.abs(anchor - times) / SECONDS_PER_DAY,
            co_items,
            overlap(item_rows, d_cand, d_user),
            np.clip(dot_rows(index.item_vectors, uvec, items), 0.0, None),
        ]
    )
    users = np.zeros(0, dtype=np.int64)
    user_x = np.zeros((0, 5))
    if hops == 2 and who.size:
        n_users = len(env.user_ids)
        shared = np.bincount(who, minlength=n_users)
        shared[u] = 0
        users = np.flatnonzero(shared)
        weighted = np.bincount(who, weights=ew[group], minlength=n_users)[users]
        latest = np.full(n_users, -np.inf)
        np.maximum.at(latest, who, when)
        rows = index.user_dist[users]
        user_x = np.column_stack(
            [
                np.minimum(weighted / np.sqrt(len(items) * index.degree[users]), 1.0),
                np.abs(anchor - latest[users]) / SECONDS_PER_DAY,
                shared[users].astype(np.float64),
                overlap(rows, d_cand, d_user),
                np.full(len(users), np.nan),
            ]
        )
    node_ids = np.concatenate([index.item_nodes[items], index.user_nodes[users]])
    matrix = np.vstack([item_x, user_x])
    is_item = np.zeros(len(node_ids), dtype=bool)
    is_item[: len(items)] = True
    changed = np.array([node in updated for node in node_ids.tolist()], dtype=bool)
    # Memories changed by Stage W: the items' read now (every item neighbour is scored); the users'
    # stay NaN, read only when they may rank (`read_user_similarity`).
    changed_items = np.flatnonzero(changed & is_item)
    for row, vector in zip(changed_items, updated.read(node_ids[changed_items].tolist()), strict=True):
        matrix[row, 4] = max(float(vector @ uvec), 0.0)
    where = np.concatenate([items, users]).astype(np.int64)
    found = NeighbourFeatures(node_ids, is_item, where, matrix, uvec, changed & ~is_item, updated)
    if user_similarity:
        read_user_similarity(index, found, np.flatnonzero(np.isnan(matrix[:, 4])))
    return found


def _candidates_per_user(index: FeatureIndex, candidates: Sequence[str]) -> np.ndarray:
    """How many of `candidates` each user interacted with (training graph), by user index."""
    graph = index.graph
    cand_cols = np.array([index.env.item_index[c] for c in candidates], dtype=np.int64)
    c_lengths = graph.item_ptr[cand_cols + 1] - graph.item_ptr[cand_cols]
    c_flat = np.repeat(graph.item_ptr[cand_cols] - np.cumsum(c_lengths) + c_lengths, c_lengths)
    c_users = graph.item_users[c_flat + np.arange(c_lengths.sum())]
    return np.bincount(c_users, minlength=len(index.degree)).astype(np.float64)


def read_user_similarity(index: FeatureIndex, found: NeighbourFeatures, rows: np.ndarray) -> None:
    """Fill the memory_similarity_score of the user neighbours at `rows` of `found.matrix` from
    their memories' embeddings (embedded first when not read yet): the initial memory's, or the one
    Stage W changed it to. Each row's cosine is computed on its own (`np.einsum`, no BLAS
    blocking; a changed memory's as the item neighbours' are), so its bits do not depend on which
    rows are read together."""
    rows = np.asarray(rows, dtype=np.int64)
    mine, initial = rows[found.changed[rows]], rows[~found.changed[rows]]
    if len(initial):
        vectors = index.user_vectors[found.index[initial]]
        cosine = np.einsum("ij,j->i", vectors, found.user_vector.astype(np.float32))
        found.matrix[initial, 4] = np.clip(cosine.astype(np.float64), 0.0, None)
    for row, vector in zip(mine, found.updated.read(found.node_ids[mine].tolist()), strict=True):
        found.matrix[row, 4] = max(float(vector @ found.user_vector), 0.0)


def recency_profile(
    index: FeatureIndex, user_id: str, visible: Sequence[str] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """A user's (visible) training items as environment indices, and their edge weights."""
    items, _, ew = _own_edges(index, index.env.user_index[user_id], visible)
    return items, ew
