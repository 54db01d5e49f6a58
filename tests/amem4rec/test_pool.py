"""The AMEM4Rec pool store: versioned evolutions that never lose a concurrent one, replays applied once,
exact search (through Chroma or pgvector's index for big pools), and one clear error for each bad pool
(nothing overwritten). Tests taking `pool_backend` run on the embedded store and on PostgreSQL."""

import shutil
import threading
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from recgraph.cli import main
from state.amem4rec.context import Amem4RecContext
from tools.amem4rec import pool as memory_pool
from tools.amem4rec.folder import forget_pool, open_pool, pool_config
from tools.amem4rec.index import PoolError
from tools.amem4rec.record import encode_vector, memory_text
from world import vector_memo as memory_pool_vectors
from world.embeddings import embed_texts
from world.environment import get_environment
from world.vector_memo import embed_batch, embed_each, forget_memo

CONFIG = pool_config(Amem4RecContext())


@pytest.fixture
def dataset(amem_dataset: str):
    return get_environment(amem_dataset).dataset


def store_plan(key: str, memory_id: str, behavior: str, pattern: str) -> dict:
    vector = embed_texts([memory_text(behavior, pattern)])[0]
    memory = {
        "id": memory_id,
        "behavior_explanation": behavior,
        "pattern_description": pattern,
        "embedding": encode_vector(vector),
    }
    return {
        "window_key": key,
        "user_id": key.split(":")[0],
        "action": "store_only",
        "store": True,
        "memory": memory,
        "rewrites": [],
        "linked": [],
        "usage": [],
    }


def evolve_plan(key: str, memory_id: str, base_version: int, behavior: str, pattern: str) -> dict:
    rewrite = {
        "thought_id": memory_id,
        "behavior_explanation": behavior,
        "pattern_description": pattern,
        "reasoning": "r",
        "base_version": base_version,
    }
    return {
        "window_key": key,
        "user_id": key.split(":")[0],
        "action": "update_only",
        "store": False,
        "memory": {},
        "rewrites": [rewrite],
        "linked": [memory_id],
        "usage": [],
    }


def test_two_evolutions_of_one_memory_from_the_same_version_are_both_kept(
    dataset, tmp_path: Path, pool_backend: str
) -> None:
    pool = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
    pool.apply(store_plan("a:0", "m-a-0", "Likes dramas.", "Drama then drama."))
    first = evolve_plan("b:0", "m-a-0", 1, "Likes quiet dramas.", "Drama, then romance.")
    second = evolve_plan("c:0", "m-a-0", 1, "Likes crime dramas.", "Drama, then crime.")
    assert pool.apply(first)["merged"] == []
    assert pool.apply(second)["merged"] == ["m-a-0"]
    memory = pool.get("m-a-0")
    assert (memory.version, memory.evolution_count) == (3, 2)
    assert memory.behavior_explanation == "Likes quiet dramas. Likes crime dramas."
    assert memory.pattern_description == "Drama, then romance. Drama, then crime."
    lineage = pool.history("m-a-0")
    assert [(r["version"], r["kind"], r["window_key"]) for r in lineage] == [
        (1, "created", "a:0"),
        (2, "evolved", "b:0"),
        (3, "merged", "c:0"),
    ]
    assert lineage[2]["proposed"] == {
        "behavior_explanation": "Likes crime dramas.",
        "pattern_description": "Drama, then crime.",
    }
    # The merged text is what the index holds now.
    vector = embed_texts([memory.text()])[0]
    assert pool.search(vector, 1)[0][0].id == "m-a-0"
    assert pool.search(vector, 1)[0][1] == pytest.approx(1.0, abs=1e-5)


def test_concurrent_appliers_lose_nothing(dataset, tmp_path: Path, pool_backend: str) -> None:
    pool = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
    pool.apply(store_plan("a:0", "m-a-0", "Likes dramas.", "Drama then drama."))
    plans = [evolve_plan(f"u{n}:0", "m-a-0", 1, f"Tendency {n}.", f"Sequence {n}.") for n in range(6)]
    threads = [threading.Thread(target=pool.apply, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    memory = pool.get("m-a-0")
    assert (memory.version, memory.evolution_count) == (7, 6)
    history = pool.history("m-a-0")
    assert sorted(r["window_key"] for r in history[1:]) == [f"u{n}:0" for n in range(6)]
    assert sum(r["kind"] == "merged" for r in history) == 5
    kept = {f"Tendency {n}." for n in range(6)}
    # Every rewrite is in the lineage: as the text applied, or as the evolver's proposal merged in.
    seen = {r["behavior_explanation"] for r in history} | {
        (r["proposed"] or {}).get("behavior_explanation") for r in history
    }
    assert kept <= seen


def test_a_replayed_window_is_applied_once(dataset, tmp_path: Path, pool_backend: str) -> None:
    pool = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
    plan = store_plan("a:0", "m-a-0", "Likes dramas.", "Drama then drama.")
    assert pool.apply(plan)["status"] == "applied"
    assert pool.apply(plan)["status"] == "already applied"
    assert pool.size() == 1 and len(pool.ledger()) == 1 and pool.proposals() == {}
    # A whole round replayed (as after a lost connection whose commit went through): nothing twice.
    round_ = [
        store_plan("b:0", "m-b-0", "Likes comedies.", "Comedy then comedy."),
        evolve_plan("c:0", "m-a-0", 1, "Likes quiet dramas.", "Drama, then romance."),
    ]
    for plan in round_:
        pool.log_proposal(plan)
    assert [o["status"] for o in pool.apply_all(round_)] == ["applied", "applied"]
    fingerprint = pool.fingerprint()
    assert [o["status"] for o in pool.apply_all(round_)] == ["already applied"] * 2
    assert pool.fingerprint() == fingerprint and pool.size() == 2 and len(pool.ledger()) == 3
    assert pool.get("m-a-0").version == 2 and pool.proposals() == {}


def test_search_is_exact_and_the_index_is_rebuilt_from_the_record(
    dataset, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool_backend: str
) -> None:
    monkeypatch.setattr(memory_pool, "EXACT_UP_TO", 0)  # a "big" pool: candidates from Chroma / HNSW
    folder = tmp_path / "pool"
    pool = open_pool(folder, dataset, CONFIG, create=True)
    texts = [f"Keeps returning to genre {n}." for n in range(70)]  # more than the index's 64 candidates
    pool.apply_all(
        [store_plan(f"u{n}:0", f"m-u{n}-0", text, f"Pattern {n % 7}.") for n, text in enumerate(texts)]
    )
    query = embed_texts(["Keeps returning to genre 7. Pattern 0."])[0]
    vectors = pool.vectors([f"m-u{n}-0" for n in range(70)])
    expected = np.argsort(-(vectors @ query), kind="stable")
    assert [m.id for m, _ in pool.search(query, 5)] == [f"m-u{n}-0" for n in expected[:5]]
    assert [m.id for m, _ in pool.search(query, 9)] == [f"m-u{n}-0" for n in expected[:9]]  # whole pool
    fingerprint = pool.fingerprint()
    forget_pool(folder)
    if pool_backend == "sqlite":
        shutil.rmtree(folder / "chroma")  # e.g. a crash between the SQLite commit and the index write
    reopened = open_pool(folder, dataset)
    assert reopened.fingerprint() == fingerprint
    assert [m.id for m, _ in reopened.search(query, 5)] == [f"m-u{n}-0" for n in expected[:5]]


def test_memory_vectors_are_the_encoders_and_are_encoded_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    texts = ["Keeps returning to niche items. Order: niche → niche.", "Samples varied kinds of item."]
    found = embed_each([texts[0], texts[1], texts[0]])
    alone = np.array([embed_texts([text])[0] for text in texts])
    assert np.array_equal(found, alone[[0, 1, 0]])  # a batch of one each, whatever came along
    together = embed_texts(texts)
    assert np.array_equal(embed_batch(texts), together)
    forget_memo()

    def no_encoder(batch: list[str]) -> np.ndarray:
        raise AssertionError(f"encoded again: {batch}")

    monkeypatch.setattr(memory_pool_vectors, "embed_texts", no_encoder)
    assert np.array_equal(embed_each(texts[::-1]), alone[::-1])  # from the shared store
    assert np.array_equal(embed_batch(texts), together)


def run_cli(args: list[str], capsys: pytest.CaptureFixture) -> tuple[int, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err.strip()


def test_bad_pools_get_one_line_each_and_nothing_is_overwritten(
    dataset,
    amem_dataset: str,
    write_amem_dataset: Callable[..., Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture,
) -> None:
    folder = tmp_path / "pool"
    pool = open_pool(folder, dataset, CONFIG, create=True)
    pool.apply(store_plan("a:0", "m-a-0", "Likes dramas.", "Drama then drama."))
    data = amem_dataset
    code, err = run_cli(
        ["amem4rec", "pool", "show", "m-zzz", "--pool", str(folder), "--dataset", data], capsys
    )
    assert (
        code == 2
        and err == f"recgraph: error: no memory 'm-zzz' in the pool at {folder.resolve()} (1 memories)"
    )
    code, _ = run_cli(["amem4rec", "pool", "show", "m-a-0", "--pool", str(folder), "--dataset", data], capsys)
    assert code == 0
    # A pool built for another dataset.
    other = write_amem_dataset(tmp_path / "other", name="other")
    manifest = (folder / "manifest.json").read_bytes()
    code, err = run_cli(["amem4rec", "train", "--pool", str(folder), "--dataset", str(other)], capsys)
    assert code == 2 and "was built for dataset 'amem'" in err and err.count("\n") == 0
    assert (folder / "manifest.json").read_bytes() == manifest
    # Other training settings into the same folder.
    with pytest.raises(PoolError, match=r"amem4rec_tau_low=0.55 \(asked 0.6\)"):
        open_pool(folder, dataset, {**CONFIG, "amem4rec_tau_low": 0.6}, create=True)
    # Damaged folders: not a pool, an unreadable manifest, an unreadable database.
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    code, err = run_cli(["amem4rec", "train", "--pool", str(stranger), "--dataset", data], capsys)
    assert code == 2 and "is not an AMEM4Rec pool" in err and (stranger / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in stranger.iterdir()) == ["notes.txt"]
    for damage, expected in (
        ("manifest.json", "manifest.json is unreadable"),
        ("pool.sqlite", "pool.sqlite"),
    ):
        broken = tmp_path / f"broken-{damage}"
        shutil.copytree(folder, broken)
        for journal in broken.glob("pool.sqlite-*"):
            journal.unlink()
        (broken / damage).write_text("{ not what it should be" * 400)
        before = (broken / damage).read_bytes()
        code, err = run_cli(
            ["amem4rec", "pool", "show", "m-a-0", "--pool", str(broken), "--dataset", data], capsys
        )
        assert code == 2 and f"pool folder {broken.resolve()} is damaged" in err and expected in err
        assert (broken / damage).read_bytes() == before
