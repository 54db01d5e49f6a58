"""Classic baselines on a tiny dataset whose answers can be worked out by hand.

Training matrix of the tiny dataset (history only; validation and test held out):
u1 -> {1, 6}; u2 -> {1}; u3 -> {2, 4}; u4 has too few interactions to split.
Popularity: 1:2, 2:1, 4:1, 6:1. Cosine(1, 6) = 1/sqrt(2); cosine(2, 4) = 1.
"""

from pathlib import Path

import numpy as np
import pytest

from agents.baselines.classic import fit_bpr, item_similarity
from graphs.registry import get_graph
from state.baselines.context import BaselinesContext
from world.environment import get_environment


def rank(method: str, folder: Path, user: str, candidates: list[str], **knobs) -> dict:
    context = BaselinesContext(dataset=str(folder), **knobs)
    return get_graph(method).invoke({"user_id": user, "candidates": candidates}, context=context)


def test_popularity_order_with_stable_ties(tiny_dataset_dir: Path) -> None:
    output = rank("popularity", tiny_dataset_dir, "u1", ["6", "4", "1", "3"])
    assert output["ranking"] == ["1", "6", "4", "3"]
    assert output["scores"] == {"1": 2.0, "6": 1.0, "4": 1.0, "3": 0.0}


def test_item_similarity_by_hand(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    similarity = item_similarity(env, neighbours=0).toarray()
    index = env.item_index
    assert similarity[index["1"], index["6"]] == pytest.approx(1 / np.sqrt(2))
    assert similarity[index["2"], index["4"]] == pytest.approx(1.0)
    assert similarity[index["1"], index["1"]] == 0.0  # no self-similarity
    assert similarity[index["1"], index["2"]] == 0.0


def test_itemknn_ranks_by_similarity_then_popularity(tiny_dataset_dir: Path) -> None:
    # u2 sees 1 (train) and 3 (warm-up): 6 is similar to 1; 2 and 4 tie at 0, popularity 1 each.
    output = rank("itemknn", tiny_dataset_dir, "u2", ["2", "4", "6"])
    assert output["ranking"] == ["6", "2", "4"]
    assert output["scores"]["6"] == pytest.approx(1 / np.sqrt(2), abs=1e-5)
    # u3's history (2, 4, 5) is similar to nothing offered: popularity decides.
    assert rank("itemknn", tiny_dataset_dir, "u3", ["3", "6", "1"])["ranking"] == ["1", "6", "3"]


def test_random_is_seeded_per_user(tiny_dataset_dir: Path) -> None:
    candidates = ["1", "2", "3", "4", "5", "6"]
    first = rank("random", tiny_dataset_dir, "u1", candidates, seed=3)["ranking"]
    again = rank("random", tiny_dataset_dir, "u1", candidates, seed=3)["ranking"]
    others = {tuple(rank("random", tiny_dataset_dir, "u1", candidates, seed=s)["ranking"]) for s in range(6)}
    assert first == again
    assert len(others) > 1


def test_bpr_training_is_reproducible(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    context = BaselinesContext(dataset=str(tiny_dataset_dir), bpr_factors=8, bpr_iterations=20, seed=5)
    users_a, items_a = fit_bpr(env, context)  # fitted twice, not read back from the cache
    users_b, items_b = fit_bpr(env, context)
    assert np.array_equal(users_a, users_b) and np.array_equal(items_a, items_b)
    assert items_a.shape[0] == len(env.item_ids)


def test_embedding_prefers_items_like_the_history(tiny_dataset_dir: Path) -> None:
    # u2 watched "Alpha Wars" (Action Sci-Fi) and "Gamma Quest" (Action Adventure).
    output = rank("embedding", tiny_dataset_dir, "u2", ["2", "6"])
    assert output["ranking"] == ["6", "2"]


def test_item_similarity_is_scikit_learns_cosine_to_the_bit() -> None:
    from sklearn.metrics.pairwise import cosine_similarity

    env = get_environment("ml-100k")
    expected = cosine_similarity(env.train_matrix.T.tocsr(), dense_output=False).tolil()
    expected.setdiag(0)
    expected = expected.tocsr()
    expected.eliminate_zeros()
    found = item_similarity(env, neighbours=0)
    assert found.dtype == expected.dtype and found.nnz == expected.nnz
    assert (found != expected).nnz == 0
    # Entry for entry in the same order (the top-k keeps ties in column order), not only equal values.
    for part in ("indptr", "indices", "data"):
        assert np.array_equal(getattr(found, part), getattr(expected, part)), part
