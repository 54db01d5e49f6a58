"""Scoring rules of the classic (non-LLM) baselines.

Each scorer maps (environment, context, user, visible history, items) to one score
per item; higher is better. These are real, documented baselines:
- random: seeded uniform scores, per (seed, user);
- popularity: training interaction counts;
- itemknn: sum of item-item cosine similarities (training co-occurrence, top-n
  neighbours per item) to the visible history; ties broken by popularity;
- bpr: Bayesian Personalised Ranking (`implicit`), trained on training interactions
  (the factors are kept in the dataset's cache, keyed by the training matrix, the knobs and the
  implicit version: a 50k-user catalog trains once, about 30 CPU-seconds);
  outside the classic scenario the user vector is folded in as the mean of the
  visible items' factors, so the model sees only what the scenario allows;
- embedding: cosine between the mean MiniLM embedding of the user's recent items
  and each item.
Users with no visible history are scored by popularity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import sparse

from state.baselines.context import BaselinesContext
from world.environment import Environment
from world.item_vectors import save_arrays
from world.paths import dataset_cache
from world.seeding import user_rng

Scorer = Callable[[Environment, BaselinesContext, str, Sequence[str], Sequence[str], str], np.ndarray]
TIE_BREAK = 1e-6


def popularity_scores(env: Environment, items: Sequence[str]) -> np.ndarray:
    """Training popularity of each item."""
    return np.array([env.popularity.get(i, 0) for i in items], dtype=np.float64)


def normalised_popularity(env: Environment, items: Sequence[str]) -> np.ndarray:
    """Popularity scaled into [0, 1] — small enough to break ties only."""
    counts = popularity_scores(env, items)
    top = max(env.popularity.values(), default=1)
    return counts / top


def score_random(
    env: Environment,
    ctx: BaselinesContext,
    user: str,
    history: Sequence[str],
    items: Sequence[str],
    scenario: str,
) -> np.ndarray:
    """Seeded uniform scores (same for a user whatever the run order)."""
    return user_rng(ctx.seed, user, "random-baseline").random(len(items))


def score_popularity(
    env: Environment,
    ctx: BaselinesContext,
    user: str,
    history: Sequence[str],
    items: Sequence[str],
    scenario: str,
) -> np.ndarray:
    """Most-interacted-with items first."""
    return popularity_scores(env, items)


def item_similarity(env: Environment, neighbours: int) -> sparse.csr_matrix:
    """Item-item cosine similarity of training co-occurrence, top `neighbours` per row.

    Computed as scikit-learn's `cosine_similarity(X, dense_output=False)` does (each item's row
    divided by its L2 norm, then the sparse product), without importing scikit-learn (1.7 s)."""
    items = env.train_matrix.T.tocsr()
    # scikit-learn keeps float32 (computing anything else in float64), sums each row's squares and
    # divides by their square root in double precision, then stores the quotient in the row's dtype.
    items = items.copy() if items.dtype == np.float32 else items.astype(np.float64)
    squares = np.asarray(items.multiply(items).astype(np.float64).sum(axis=1)).ravel()
    norms = np.sqrt(squares)
    norms[norms == 0.0] = 1.0  # an item nobody interacted with stays a zero row
    items.data = (items.data / np.repeat(norms, np.diff(items.indptr))).astype(items.dtype)
    similarity = (items @ items.T).tocsr()
    # Sorted columns, as the LIL round trip this replaced left them: the top-k below breaks ties
    # by column order. The diagonal is zeroed in place; a LIL copy of ML-1M's nearly dense
    # co-occurrence held 13.7M Python floats (1.2 GB).
    similarity.sort_indices()
    row_numbers = np.arange(similarity.shape[0], dtype=similarity.indices.dtype)
    row_of = np.repeat(row_numbers, np.diff(similarity.indptr))
    similarity.data[similarity.indices == row_of] = 0
    del row_of
    similarity.eliminate_zeros()
    if neighbours <= 0:
        return similarity
    rows, cols, vals = [], [], []
    for row in range(similarity.shape[0]):
        start, end = similarity.indptr[row], similarity.indptr[row + 1]
        data, index = similarity.data[start:end], similarity.indices[start:end]
        keep = np.argsort(-data, kind="stable")[:neighbours]
        rows.extend([row] * len(keep))
        cols.extend(index[keep])
        vals.extend(data[keep])
    return sparse.csr_matrix((vals, (rows, cols)), shape=similarity.shape)


def score_itemknn(
    env: Environment,
    ctx: BaselinesContext,
    user: str,
    history: Sequence[str],
    items: Sequence[str],
    scenario: str,
) -> np.ndarray:
    """Summed similarity to the visible history items."""
    tie_break = TIE_BREAK * normalised_popularity(env, items)
    if not history:
        return popularity_scores(env, items)
    similarity = env.resource(
        f"itemknn:{ctx.itemknn_neighbors}", lambda: item_similarity(env, ctx.itemknn_neighbors)
    )
    rows = [env.item_index[i] for i in history]
    summed = np.asarray(similarity[rows].sum(axis=0)).ravel()
    return summed[[env.item_index[i] for i in items]] + tie_break


def bpr_cache_path(env: Environment, ctx: BaselinesContext) -> Path:
    """Where the factors of BPR trained with `ctx`'s knobs on `env`'s training matrix are kept."""
    import implicit

    matrix = env.train_matrix.tocsr()
    digest = hashlib.sha256(f"{matrix.shape}:{implicit.__version__}".encode())
    for part in (matrix.indptr, matrix.indices, matrix.data):
        digest.update(np.ascontiguousarray(part).tobytes())
    knobs = f"f{ctx.bpr_factors}-i{ctx.bpr_iterations}-s{ctx.seed}"
    return dataset_cache(env.dataset) / f"bpr-{knobs}-{digest.hexdigest()[:16]}.npz"


def train_bpr(env: Environment, ctx: BaselinesContext) -> tuple[np.ndarray, np.ndarray]:
    """BPR's (user_factors, item_factors): from the dataset's cache (`bpr_cache_path`) or fitted on
    the training matrix now and saved there."""
    path = bpr_cache_path(env, ctx)
    if path.is_file():
        with np.load(path) as saved:
            return saved["users"], saved["items"]
    users, items = fit_bpr(env, ctx)
    save_arrays(path, users=users, items=items)  # whole or absent: a killed run never leaves half a file
    return users, items


def fit_bpr(env: Environment, ctx: BaselinesContext) -> tuple[np.ndarray, np.ndarray]:
    """Fit BPR on the training matrix; returns (user_factors, item_factors)."""
    from implicit.cpu.bpr import BayesianPersonalizedRanking

    # One thread: implicit's parallel SGD is not reproducible run to run.
    model = BayesianPersonalizedRanking(
        factors=ctx.bpr_factors,
        iterations=ctx.bpr_iterations,
        random_state=ctx.seed,
        num_threads=1,
    )
    model.fit(env.train_matrix.tocsr(), show_progress=False)
    return np.asarray(model.user_factors), np.asarray(model.item_factors)


def score_bpr(
    env: Environment,
    ctx: BaselinesContext,
    user: str,
    history: Sequence[str],
    items: Sequence[str],
    scenario: str,
) -> np.ndarray:
    """Dot product of the user's and items' BPR factors."""
    if not history:
        return popularity_scores(env, items)
    key = f"bpr:{ctx.bpr_factors}:{ctx.bpr_iterations}:{ctx.seed}"
    user_factors, item_factors = env.resource(key, lambda: train_bpr(env, ctx))
    if scenario == "classic":
        vector = user_factors[env.user_index[user]]
    else:
        vector = item_factors[[env.item_index[i] for i in history]].mean(axis=0)
    return item_factors[[env.item_index[i] for i in items]] @ vector


def score_embedding(
    env: Environment,
    ctx: BaselinesContext,
    user: str,
    history: Sequence[str],
    items: Sequence[str],
    scenario: str,
) -> np.ndarray:
    """Cosine between the mean embedding of the recent history and each item."""
    if not history:
        return popularity_scores(env, items)
    from tools.similarity import profile_vector

    recent = history[-ctx.embedding_recent_items :] if ctx.embedding_recent_items > 0 else history
    return env.item_vectors()[[env.item_index[i] for i in items]] @ profile_vector(env, recent)


SCORERS: dict[str, tuple[Scorer, str]] = {
    "random": (score_random, "seeded uniform random order"),
    "popularity": (score_popularity, "training popularity"),
    "itemknn": (score_itemknn, "item-item co-occurrence similarity to the history"),
    "bpr": (score_bpr, "BPR matrix factorisation"),
    "embedding": (score_embedding, "MiniLM cosine to the recent history"),
}
"""Classic baseline name -> (scorer, what it ranks by)."""
