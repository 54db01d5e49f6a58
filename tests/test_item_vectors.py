"""Item vectors are embedded only when first needed, kept on disk (resumable), reused by the next
process, reported as progress, and the environment's resource locks are per key."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

import world.item_vectors as item_vectors
from world.datasets import load_path
from world.embeddings import EMBEDDING_DIM
from world.environment import Environment
from world.item_vectors import PROGRESS_LABEL, ItemVectors
from world.paths import dataset_cache
from world.progress import PhaseClock, reporting
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


class CountingEmbedder:
    """A stand-in for MiniLM: a deterministic unit vector per text, and a log of what it embedded."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        rows = np.array([[len(t), sum(map(ord, t)) % 97, 1.0] for t in texts], dtype=np.float32)
        padded = np.zeros((len(texts), EMBEDDING_DIM), dtype=np.float32)
        padded[:, :3] = rows
        return padded / np.linalg.norm(padded, axis=1, keepdims=True)


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Environment, CountingEmbedder]:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(item_vectors, "CHUNK", 8)
    embedder = CountingEmbedder()
    monkeypatch.setattr(item_vectors, "embed_texts", embedder)
    data = generate(SynthSpec(users=30, items=40, interactions=200, timestamps=False))
    return Environment(load_path(write_synth(data, tmp_path / "cat")[0].parent)), embedder


def test_rows_are_embedded_on_first_use_and_reused_from_disk(
    catalog: tuple[Environment, CountingEmbedder],
) -> None:
    env, embedder = catalog
    vectors = ItemVectors(env.dataset, env.item_ids)
    clock, seen = PhaseClock(), []
    with reporting(clock, lambda label, done, total: seen.append((label, done, total))):
        some = vectors[[3, 1, 3]]
    assert [len(call) for call in embedder.calls] == [2]  # rows 1 and 3, once each
    assert np.allclose(some[0], some[2]) and some.shape == (3, EMBEDDING_DIM)
    assert seen == [(PROGRESS_LABEL, 0, 2), (PROGRESS_LABEL, 2, 2)]  # its total: the rows it embeds
    assert list(clock.seconds()) == [PROGRESS_LABEL]
    assert np.allclose(vectors[1], some[1])  # an int index gives the row
    assert len(embedder.calls) == 1

    again = ItemVectors(env.dataset, env.item_ids)  # another process: the two rows are on disk
    assert again.cached() == 2
    assert np.array_equal(again[[1, 3]], some[[1, 0]])
    assert len(embedder.calls) == 1
    matrix = np.asarray(again)  # the rest, in chunks of 8
    assert [len(call) for call in embedder.calls[1:]] == [8, 8, 8, 8, 6]
    assert np.array_equal(matrix[[1, 3]], some[[1, 0]])
    files = sorted(p.name for p in dataset_cache(env.dataset).iterdir())
    assert files == [again.path.name]  # complete: the partial file and its mask are gone
    assert np.array_equal(np.asarray(ItemVectors(env.dataset, env.item_ids)), matrix)
    assert len(embedder.calls) == 6


def test_rows_another_process_wrote_after_this_one_opened_the_cache_are_not_embedded_again(
    catalog: tuple[Environment, CountingEmbedder],
) -> None:
    env, embedder = catalog
    parent = ItemVectors(env.dataset, env.item_ids)  # opened before any row is on disk
    step = ItemVectors(env.dataset, env.item_ids)  # the item-vector step's process
    some = step[[2, 5]]
    assert parent.cached() == 0 and len(embedder.calls) == 1
    assert np.array_equal(parent[[5, 2]], some[[1, 0]])  # read from the shared file
    assert len(embedder.calls) == 1
    parent[[2, 7]]  # only row 7 is new
    assert embedder.calls[1:] == [[step.texts[7]]]
    matrix = np.asarray(step)  # the step completes the catalog and renames the file into place
    calls = len(embedder.calls)
    assert np.array_equal(np.asarray(parent), matrix) and len(embedder.calls) == calls
    assert parent.cached() == len(env.item_ids)


def test_other_texts_get_other_vectors(catalog: tuple[Environment, CountingEmbedder]) -> None:
    env, _ = catalog
    first = ItemVectors(env.dataset, env.item_ids)
    other = ItemVectors(env.dataset, env.item_ids[::-1])
    assert first.path != other.path
    assert np.array_equal(first[[0]], other[[len(env.item_ids) - 1]])


def test_a_long_build_does_not_block_other_resources(catalog: tuple[Environment, CountingEmbedder]) -> None:
    env, _ = catalog
    started, release = threading.Event(), threading.Event()

    def slow() -> str:
        started.set()
        assert release.wait(10)
        return "slow"

    builder = threading.Thread(target=env.resource, args=("slow", slow))
    builder.start()
    assert started.wait(10)
    assert env.resource("quick", lambda: "quick") == "quick"  # not held up by "slow"
    release.set()
    builder.join(10)
    assert env.resource("slow", lambda: "rebuilt") == "slow"


def test_bench_prefetches_the_rows_its_users_read_in_one_pass(
    catalog: tuple[Environment, CountingEmbedder],
) -> None:
    from bench.protocol.plan import plan_cases
    from bench.protocol.spec import Protocol
    from bench.run.item_prefetch import case_item_rows, prefetch_item_vectors

    env, embedder = catalog
    env.resource("item_vectors", lambda: ItemVectors(env.dataset, env.item_ids))
    cases = plan_cases(env, Protocol(dataset=str(env.dataset.name), candidates=5, users=4))
    rows = case_item_rows(env, cases, "classic")
    wanted = {i for c in cases for i in (*env.history(c.user_id, "classic"), *c.candidates)}
    assert sorted(env.item_ids[r] for r in rows) == sorted(wanted)

    assert not prefetch_item_vectors("popularity", env, cases, "classic")  # reads no item vectors
    assert embedder.calls == []
    assert prefetch_item_vectors("vanilla_llm", env, cases, "classic")
    assert [len(call) for call in embedder.calls] == [min(8, len(rows) - i) for i in range(0, len(rows), 8)]
    assert env.item_vectors().cached() == len(rows)
    assert prefetch_item_vectors("vanilla_llm", env, cases, "classic")  # on disk: nothing embedded again
    assert sum(map(len, embedder.calls)) == len(rows)
