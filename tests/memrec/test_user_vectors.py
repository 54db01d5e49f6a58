"""MemRec's initial user vectors: one embedding per distinct memory text, mapped back to every user."""

from pathlib import Path

import numpy as np
import pytest

from world.embeddings import embed_texts
from world.environment import get_environment


def test_users_with_the_same_memory_share_one_embedding(
    tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.memrec import user_vectors as module

    env = get_environment(str(tiny_dataset_dir))
    assert len(env.user_ids) == 4
    texts = ["History of 2 items. Most recent: \"A\".", "No training interactions yet."] * 2
    monkeypatch.setattr(module, "initial_user_memories", lambda _env: texts)
    monkeypatch.setattr(module, "PART_USERS", 1)
    calls: list[list[str]] = []
    monkeypatch.setattr(module, "embed_texts", lambda chunk: calls.append(list(chunk)) or embed_texts(chunk))
    progress: list[tuple[int, int]] = []
    vectors = module.initial_user_vectors(env, lambda done, total: progress.append((done, total)))
    assert calls == [[texts[0]], [texts[1]]]
    assert progress == [(1, 2), (2, 2)]
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.array_equal(vectors[0], vectors[2]) and np.array_equal(vectors[1], vectors[3])
    assert np.allclose(vectors, embed_texts(texts), atol=1e-5)
    assert np.array_equal(np.load(module.cache_path(env, texts)), vectors)


def test_parts_of_the_old_per_user_layout_are_not_read(
    tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part file left by the per-user layout has the shape of a distinct-text part but other rows."""
    from agents.memrec import user_vectors as module

    env = get_environment(str(tiny_dataset_dir))
    texts = [f"memory {i}" for i in range(4)]
    monkeypatch.setattr(module, "initial_user_memories", lambda _env: texts)
    monkeypatch.setattr(module, "PART_USERS", 4)
    parts = module.cache_path(env, texts).with_suffix("")
    parts.mkdir(parents=True)
    np.save(parts / "part-00000.npy", np.zeros((4, 384), dtype=np.float32))
    vectors = module.initial_user_vectors(env)
    assert np.allclose(vectors, embed_texts(texts), atol=1e-5)
    assert not parts.exists()
