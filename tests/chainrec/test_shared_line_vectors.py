"""The learned planner's training warms its memory-line vectors through the store every process
shares: a fresh process warming the same trajectories encodes nothing and gets the same bits."""

from __future__ import annotations

import numpy as np
import pytest

from agents.chainrec.offline.policy_data import warm_embeddings
from agents.chainrec.online import features
from world import vector_memo
from world.embeddings import embed_texts


def rows() -> list[dict]:
    """Two trajectory rows whose tool outputs repeat one line (it is embedded once)."""
    outputs = [
        {"LongTermPreference": {"tool": "LongTermPreference", "summary": "likes quiet dramas"}},
        {
            "ItemProfile": {"tool": "ItemProfile", "summary": "three cold candidates"},
            "LongTermPreference": {"tool": "LongTermPreference", "summary": "likes quiet dramas"},
        },
    ]
    return [{"tool_outputs": tool_outputs} for tool_outputs in outputs]


def forget_process_caches() -> None:
    """What a fresh process starts with: nothing cached in memory (the shared store stays)."""
    with features._cache_lock:
        features._cache.clear()
    vector_memo.forget_memo()


def test_a_fresh_process_finds_the_warmed_lines_bit_for_bit(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path))
    forget_process_caches()
    lines = ["LongTermPreference: likes quiet dramas", "ItemProfile: three cold candidates"]
    warm_embeddings(rows())
    first = features.embed_lines(lines)
    assert np.array_equal(np.stack([first[line] for line in lines]), embed_texts(lines))

    forget_process_caches()

    def no_encoder(batch: list[str]) -> np.ndarray:
        raise AssertionError(f"encoded again: {batch}")

    monkeypatch.setattr(vector_memo, "embed_texts", no_encoder)
    monkeypatch.setattr(features, "embed_texts", no_encoder)
    warm_embeddings(rows())
    again = features.embed_lines(lines)
    for line in lines:
        assert np.array_equal(again[line], first[line])
    forget_process_caches()
