"""MiniLM by path and the on-disk embedding cache."""

from pathlib import Path

import numpy as np

from world.embeddings import embed_texts
from world.environment import get_environment
from world.item_vectors import item_embeddings
from world.paths import dataset_cache


def test_embeddings_are_normalised_and_semantic() -> None:
    vectors = embed_texts(["a space battle movie", "science fiction war in space", "a cookbook"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_item_embeddings_are_cached_on_disk(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    first = item_embeddings(env.dataset, env.item_ids)
    files = list(dataset_cache(env.dataset).glob("item_embeddings-*.npy"))
    assert len(files) == 1
    # Overwrite the cache with a marker: a second call must read it, not recompute.
    np.save(files[0], np.full_like(first, 0.5))
    assert np.all(item_embeddings(env.dataset, env.item_ids) == 0.5)
    files[0].unlink()
    assert np.allclose(item_embeddings(env.dataset, env.item_ids), first, atol=1e-6)

