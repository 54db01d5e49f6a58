"""MemRec memory graph: initial memories, CSR neighbourhoods, versioned compare-and-set, durability."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from state.contract import InvalidRecInput
from tools.memrec.graph import MemoryGraph, item_node, memory_key, user_node
from world.database import DatabaseError
from world.environment import Environment, get_environment


@pytest.fixture
def graph(tiny_dataset_dir: Path, tmp_path: Path, backend: str):
    """The tiny dataset's memory graph in a temporary SQLite file or a fresh PostgreSQL database."""
    g = MemoryGraph.open(get_environment(str(tiny_dataset_dir)), tmp_path / "g.sqlite")
    assert g.shared == (backend == "postgres")
    yield g
    g.close()


def kinds(graph: MemoryGraph, env: Environment) -> dict[str, int]:
    """Nodes per kind, read back from the store."""
    ids = [user_node(u) for u in env.user_ids] + [item_node(i) for i in env.item_ids]
    found = graph.memories(ids)
    return {"user": sum(n.startswith("u:") for n in found), "item": sum(n.startswith("i:") for n in found)}


def test_initial_memories_are_deterministic(graph: MemoryGraph) -> None:
    assert graph.memory("i:1") == ("Alpha Wars (1977). Categories: Action, Sci-Fi.", 0)
    # u1's training history is items 1 (t=100) and 6 (t=200): Sci-Fi twice, Action once.
    assert graph.memory("u:u1") == (
        "History of 2 items. Top categories: Sci-Fi 67%, Action 33%. "
        'Most recent: "Zeta Space"; "Alpha Wars".',
        0,
    )
    assert graph.memory("u:u4")[0] == "No training interactions yet."
    assert kinds(graph, graph.env) == {"user": 4, "item": 6}
    if not graph.shared:
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


def test_memories_survive_reopening_and_reset_restores_them(
    tiny_dataset_dir: Path, tmp_path: Path, backend: str
) -> None:
    env = get_environment(str(tiny_dataset_dir))
    path = tmp_path / "durable.sqlite"
    first = MemoryGraph.open(env, path)
    initial = first.memory("i:3")
    assert first.apply_update("a", "i:3", "changed", 0)
    first.close()
    second = MemoryGraph.open(env, path)
    assert second.memory("i:3") == ("changed", 1)
    assert second.changed_rows() == [("i:3", "changed")]
    second.reset()
    assert second.memory("i:3") == (initial[0], 0) and second.changed_rows() == []
    assert second.apply_update("a", "i:3", "changed again", 0)  # update ids were forgotten too
    second.close()


def test_change_stamp_moves_with_every_commit_and_reset(graph: MemoryGraph) -> None:
    slot, before = graph.change_stamp()
    assert graph.change_stamp() == (slot, before)
    assert graph.apply_update("s1", "i:1", "one", 0)
    _, first = graph.change_stamp()
    graph.reset()
    assert graph.apply_update("s1", "i:1", "one again", 0)  # same versions as before the reset
    stamps = [before, first, graph.change_stamp()[1]]
    assert len(set(stamps)) == 3


def test_memories_of_several_datasets_and_files_share_one_database(
    tiny_dataset_dir: Path, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each (dataset, memory file) is its own memory in the shared database; reset touches only it."""
    monkeypatch.setenv("RECGRAPH_DATABASE_URL", postgres_url)
    env = get_environment(str(tiny_dataset_dir))
    first, second = MemoryGraph.open(env, tmp_path / "a.sqlite"), MemoryGraph.open(env, tmp_path / "b.sqlite")
    default = MemoryGraph.open(env)
    assert len({first.name, second.name, default.name}) == 3
    assert default.store.key == memory_key(env, None) and default.store.key.endswith(":memrec")
    assert first.apply_update("x", "u:u1", "only in a", 0)
    assert second.memory("u:u1")[1] == 0 and default.memory("u:u1")[1] == 0
    assert second.apply_update("y", "u:u1", "only in b", 0)
    second.reset()
    assert first.memory("u:u1") == ("only in a", 1)
    assert not (tmp_path / "a.sqlite").exists()  # nothing written to the file system


def test_an_unreachable_database_is_one_line_at_open(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_DATABASE_URL", "postgresql://nobody:secret@127.0.0.1:1/none")
    with pytest.raises(DatabaseError) as raised:
        MemoryGraph.open(get_environment(str(tiny_dataset_dir)), tmp_path / "g.sqlite")
    message = str(raised.value)
    assert "\n" not in message and "secret" not in message and "127.0.0.1:1" in message


def test_default_path_is_in_the_dataset_cache(tiny_dataset_dir: Path, backend: str) -> None:
    g = MemoryGraph.open(get_environment(str(tiny_dataset_dir)))
    assert g.path.name == "memrec.sqlite" and g.path.parent.name.startswith("tiny-")
    g.close()


def test_ml100k_graph_and_neighbours_of_user_1(tmp_path: Path, backend: str) -> None:
    env = get_environment("ml-100k")
    g = MemoryGraph.open(env, tmp_path / "ml.sqlite")
    assert kinds(g, env) == {"user": 943, "item": 1682}
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
