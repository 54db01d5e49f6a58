"""The changed memories' vectors the warm-up saves for other processes (`bench --workers N`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.memrec import feature_index as feature_index_module
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.vector_store import vectors_path
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.invoke import prepare_method
from state.memrec.context import MemRecContext
from tools.memrec.graph import MemoryGraph, user_node
from world import vector_memo
from world.embeddings import embed_texts
from world.environment import get_environment
from world.results_log import ResultsLog
from world.vector_memo import forget_memo


def _warm(tiny: Path, out: Path) -> MemRecContext:
    protocol = Protocol(dataset=str(tiny), candidates=3, users=10)
    cases = plan_cases(get_environment(str(tiny)), protocol)
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    return prepare_method("memrec", cases, protocol, log, 2, MemRecContext(dataset=str(tiny))).context


def _fresh_index(ctx: MemRecContext) -> FeatureIndex:
    """What another process builds: its own graph connection and feature index, no cached texts."""
    env = get_environment(ctx.dataset)
    return FeatureIndex(env, MemoryGraph.open(env, ctx.memrec_memory))


def test_a_fresh_index_reads_the_saved_vectors_and_ignores_stale_ones(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = _warm(tiny_dataset_dir, tmp_path / "run")
    assert vectors_path(Path(ctx.memrec_memory)).is_file()
    parent = _fresh_index(ctx)  # the parent's vectors, as it ranked with them (nothing saved yet read)
    monkeypatch.setattr(feature_index_module, "load_vectors", lambda *_: None)
    expected = parent.updated_vectors()
    monkeypatch.undo()
    assert len(expected) >= 3  # the warm-up changed users' and items' memories

    embedded: list[list[str]] = []
    forget_memo()  # every encoding below is either read from the file or computed: none remembered
    monkeypatch.setattr(vector_memo, "_stored", lambda *_, **__: {})
    monkeypatch.setattr(
        vector_memo, "embed_texts", lambda texts: embedded.append(list(texts)) or embed_texts(texts)
    )
    found = _fresh_index(ctx).updated_vectors()
    assert embedded == []  # everything came from the file
    assert found.keys() == expected.keys()
    assert all(np.array_equal(found[node], expected[node]) for node in found)

    # The graph moves on (e.g. a resumed run applied another job): the file is stale, never read.
    graph = MemoryGraph.open(get_environment(ctx.dataset), ctx.memrec_memory)
    node = next(iter(expected))
    text, version = graph.memory(node)
    assert graph.apply_update("test:later", node, text + " Later change.", version)
    stale = _fresh_index(ctx).updated_vectors()
    current = {text for text, _ in graph.memories(stale).values()}
    assert [sorted(batch) for batch in embedded] == [sorted(current)]  # all embedded again, once
    assert np.allclose(stale[node], embed_texts([text + " Later change."])[0], atol=1e-5)


def test_a_run_without_changed_memories_saves_an_empty_set(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    index = FeatureIndex(env, MemoryGraph.open(env, tmp_path / "m.sqlite"))
    assert index.save_updated_vectors() == 0
    assert (
        _fresh_index(
            MemRecContext(dataset=str(tiny_dataset_dir), memrec_memory=str(tmp_path / "m.sqlite"))
        ).updated_vectors()
        == {}
    )
    assert user_node(env.user_ids[0]) not in index.updated_vectors()
