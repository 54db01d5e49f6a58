"""MiniLM calls: the torch thread rule, and that the thread count changes vectors only by float noise."""

import numpy as np
import pytest
import torch

import world.embeddings as embeddings
from world.embeddings import THREADS_ENV, embed_texts, embedding_threads
from world.errors import RecgraphError

TEXTS = ["Blue Harbour Nights", 'History of 4 items. Most recent: "Quiet Fields"; "Blue Harbour Nights".']


def test_threads_follow_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(THREADS_ENV, raising=False)
    monkeypatch.setattr(embeddings.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(embeddings, "_last_threads", 1)
    monkeypatch.setattr(embeddings.os, "getloadavg", lambda: (0.2, 0.0, 0.0))
    assert embedding_threads() == 4
    monkeypatch.setattr(embeddings.os, "getloadavg", lambda: (2.5, 0.0, 0.0))
    assert embedding_threads() == 2
    monkeypatch.setattr(embeddings.os, "getloadavg", lambda: (9.0, 0.0, 0.0))
    assert embedding_threads() == 1
    # This process's own threads are part of the load: 4 of its own on an otherwise idle machine.
    monkeypatch.setattr(embeddings, "_last_threads", 4)
    monkeypatch.setattr(embeddings.os, "getloadavg", lambda: (4.0, 0.0, 0.0))
    assert embedding_threads() == 4


def test_threads_env_overrides_and_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(THREADS_ENV, "3")
    assert embedding_threads() == 3
    monkeypatch.setenv(THREADS_ENV, "zero")
    with pytest.raises(RecgraphError, match=THREADS_ENV):
        embedding_threads()


def test_thread_count_changes_vectors_by_float_noise_only_and_is_restored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = torch.get_num_threads()
    monkeypatch.setenv(THREADS_ENV, "1")
    one = embed_texts(TEXTS)
    monkeypatch.setenv(THREADS_ENV, "2")
    two = embed_texts(TEXTS)
    assert torch.get_num_threads() == before
    assert one.shape == (2, 384) and one.dtype == np.float32
    assert np.abs(one - two).max() < 1e-5
    assert float(one[0] @ one[1]) < 0.999  # two different texts, not one repeated row


def test_small_calls_are_split_into_length_sorted_batches_with_the_same_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert [embeddings.batch_size_for(n) for n in (1, 46, 64, 100, 256, 5000)] == [16, 16, 16, 25, 64, 64]
    texts = [f"Memory {i}. " + "A longer note on what this user liked. " * (i % 7) for i in range(40)]
    split = embed_texts(texts)  # three batches of 16 or fewer
    monkeypatch.setattr(embeddings, "batch_size_for", lambda count: 64)
    whole = embed_texts(texts)  # one batch padded to the longest text
    assert split.shape == whole.shape == (40, embeddings.EMBEDDING_DIM)
    assert np.abs(split - whole).max() < 1e-5
