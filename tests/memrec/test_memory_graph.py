"""MemRec memory graph: initial memories, CSR neighbourhoods, versioned compare-and-set, durability."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from state.contract import InvalidRecInput
from tools.memrec.graph import MemoryGraph
from world.environment import get_environment


@pytest.fixture
def graph(tiny_dataset_dir: Path, tmp_path: Path):
    """The tiny dataset's memory graph in a temporary SQLite file."""
    g = MemoryGraph.open(get_environment(str(tiny_dataset_dir)), tmp_path / "g.sqlite")
    yield g
    g.close()


def test_initial_memories_are_deterministic(graph: MemoryGraph) -> None:
    assert graph.memory("i:1") == ("Alpha Wars (1977). Categories: Action, Sci-Fi.", 0)
    # u1's training history is items 1 (t=100) and 6 (t=200): Sci-Fi twice, Action once.
    assert graph.memory("u:u1") == (
        "History of 2 items. Top categories: Sci-Fi 67%, Action 33%. "
        'Most recent: "Zeta Space"; "Alpha Wars".',
        0,
    )
    assert graph.memory("u:u4")[0] == "No training interactions yet."
    rows = graph.connection().execute("SELECT kind, COUNT(*) FROM nodes GROUP BY kind").fetchall()
    assert dict(rows) == {"user": 4, "item": 6}
    assert graph.connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_memories_is_one_lookup_and_skips_unknown_nodes(graph: MemoryGraph) -> None:
    found = graph.memories(["i:2", "u:u2", "i:404"])
    assert set(found) == {"i:2", "u:u2"} and found["i:2"][0].startswith("Beta Love (1990)")
    with pytest.raises(KeyError, match="i:404"):
        graph.memory("i:404")


def test_neighbourhoods_from_training_interactions_only(graph: MemoryGraph) -> None:
    hood = graph.neighbours("u1")
    assert hood.item_ids == ["1", "6"]
    assert hood.item_times.tolist() == [100.0, 200.0] and hood.item_weights.tolist() == [4.0, 4.0]
    # u2 shares item 1 in training (its 3 and 6 are validation/test); u3 shares nothing.
    assert hood.user_ids == ["u2"] and hood.shared_counts.tolist() == [1]
    assert hood.user_times.tolist() == [100.0] and hood.anchor_time == 200.0
    assert graph.neighbours("u1", hops=1).user_ids == []
    assert graph.neighbours("u4").item_ids == [] and graph.neighbours("u4").anchor_time == 0.0
    with pytest.raises(InvalidRecInput):
        graph.neighbours("nobody")
    with pytest.raises(ValueError, match="hops"):
        graph.neighbours("u1", hops=3)


def test_compare_and_set_and_idempotent_update_ids(graph: MemoryGraph) -> None:
    assert graph.apply_update("up-1", "u:u1", "likes space operas", based_on_version=0)
    assert graph.memory("u:u1") == ("likes space operas", 1)
    assert not graph.apply_update("up-2", "u:u1", "stale write", based_on_version=0)  # conflict
    assert graph.memory("u:u1") == ("likes space operas", 1)
    assert graph.apply_update("up-1", "u:u1", "likes space operas", based_on_version=0)  # replay: no-op
    assert graph.memory("u:u1") == ("likes space operas", 1)
    assert graph.apply_update("up-3", "u:u1", "likes space operas and comedies", based_on_version=1)
    assert graph.memory("u:u1")[1] == 2
    with pytest.raises(KeyError, match="u:ghost"):
        graph.apply_update("up-4", "u:ghost", "x", based_on_version=0)


def test_memories_survive_reopening_and_reset_restores_them(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    path = tmp_path / "durable.sqlite"
    first = MemoryGraph.open(env, path)
    initial = first.memory("i:3")
    assert first.apply_update("a", "i:3", "changed", 0)
    first.close()
    second = MemoryGraph.open(env, path)
    assert second.memory("i:3") == ("changed", 1)
    second.reset()
    assert second.memory("i:3") == (initial[0], 0)
    assert second.apply_update("a", "i:3", "changed again", 0)  # update ids were forgotten too
    second.close()


def test_default_path_is_in_the_dataset_cache(tiny_dataset_dir: Path) -> None:
    g = MemoryGraph.open(get_environment(str(tiny_dataset_dir)))
    assert g.path.name == "memrec.sqlite" and g.path.parent.name.startswith("tiny-")
    g.close()


def test_ml100k_graph_and_neighbours_of_user_1(tmp_path: Path) -> None:
    env = get_environment("ml-100k")
    g = MemoryGraph.open(env, tmp_path / "ml.sqlite")
    rows = dict(g.connection().execute("SELECT kind, COUNT(*) FROM nodes GROUP BY kind").fetchall())
    assert rows == {"user": 943, "item": 1682}
    assert g.memory("i:50")[0].startswith("Star Wars (1977). Categories: Action, Adventure")
    hood = g.neighbours("1")
    matrix = env.train_matrix
    u = env.user_index["1"]
    shared = np.asarray((matrix @ matrix[u].T).todense()).ravel()
    shared[u] = 0
    expected = np.flatnonzero(shared)
    assert len(hood.item_ids) == matrix[u].nnz
    assert hood.user_ids == [env.user_ids[v] for v in expected]
    assert hood.shared_counts.tolist() == shared[expected].astype(int).tolist()
    times = {e.item_id: e.timestamp for e in env.cases["1"].history}
    assert hood.anchor_time == max(times.values())
    g.close()
