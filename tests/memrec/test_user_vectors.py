"""MemRec's initial user vectors: embedded when first read, each text on its own, shared by users
with the same memory, and found again (not encoded) by the next process."""

from pathlib import Path

import numpy as np
import pytest

from agents.memrec.user_vectors import UserVectors
from world import vector_memo
from world.embeddings import embed_texts


def test_rows_are_embedded_when_first_read_each_text_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    vector_memo.forget_memo()
    texts = ['History of 2 items. Most recent: "A"; "B".', "No training interactions yet."] * 2 + ["Other."]
    encoded: list[list[str]] = []
    real = vector_memo.embed_alone
    monkeypatch.setattr(vector_memo, "embed_alone", lambda batch: encoded.append(list(batch)) or real(batch))
    vectors = UserVectors(texts)
    assert vectors.shape == (5, 384) and vectors.cached() == 0 and encoded == []
    first = vectors[np.array([0, 4])]
    assert encoded == [[texts[0], texts[4]]] and vectors.cached() == 2
    assert vectors.ready(np.array([0, 4])) and not vectors.ready(np.array([1]))
    # Each text's vector is its own encoding, whatever was read with it.
    assert np.array_equal(first, np.vstack([embed_texts([texts[0]]), embed_texts([texts[4]])]))
    assert np.array_equal(vectors[2], first[0]) and len(encoded) == 1  # the same text: no encoding
    assert np.array_equal(vectors[[0, 2]], np.stack([first[0], first[0]])) and len(encoded) == 1
    vectors[1]
    assert encoded[1:] == [[texts[1]]]
    vector_memo.forget_memo()  # the next process: found in the shared store under RECGRAPH_HOME
    again = UserVectors(texts)
    assert np.array_equal(again[np.array([4, 0, 1])], np.stack([first[1], first[0], vectors[1]]))
    assert len(encoded) == 2
    vector_memo.forget_memo()
