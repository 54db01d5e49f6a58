"""AMEM4Rec's pool in PostgreSQL: the same pool and the same search results as the embedded store,
served by a process that shares no folder with the trainer, and a round cut off by a database
restart waited for and committed once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from recgraph.cli import main
from tests.amem4rec.test_pool import CONFIG, evolve_plan, store_plan
from tests.postgres_server import PostgresServer
from tools.amem4rec.folder import open_pool
from tools.amem4rec.pool import MemoryPool
from world.database import DATABASE_URL_ENV
from world.embeddings import embed_texts
from world.environment import get_environment

REPO = Path(__file__).resolve().parents[2]
GENRES = ["dramas", "comedies", "westerns", "thrillers", "science fiction", "romances", "war films"]


def contents(count: int = 40) -> list[list[dict]]:
    """Rounds of plans: `count` stored memories, then evolutions (two from one version: a merge)."""
    stores = [
        store_plan(f"u{n}:0", f"m-u{n}-0", f"Keeps returning to {GENRES[n % 7]}.", f"Pattern {n % 5}.")
        for n in range(count)
    ]
    evolutions = [
        evolve_plan("v1:0", "m-u3-0", 1, "Now mixes westerns with dramas.", "Western, then drama."),
        evolve_plan("v2:0", "m-u3-0", 1, "Now prefers war films.", "War, then war."),
        evolve_plan("v3:0", "m-u8-0", 1, "Likes short comedies.", "Comedy, comedy, romance."),
    ]
    return [stores[: count // 2], stores[count // 2 :], evolutions]


def comparable(pool: MemoryPool) -> dict:
    """What must be equal between stores: memories, lineage, ledger decisions (no times, no seq)."""
    memories = {i: {**m.as_dict(), "created_at": 0, "updated_at": 0} for i, m in pool.memories().items()}
    lineage = {i: [{**r, "at": 0} for r in pool.history(i)] for i in memories}
    ledger = [{k: v for k, v in r.items() if k not in ("seq", "applied_at")} for r in pool.ledger()]
    return {"memories": memories, "lineage": lineage, "ledger": ledger, "fingerprint": pool.fingerprint()}


def queries() -> np.ndarray:
    texts = [f"Keeps returning to {g}. Pattern {n}." for n, g in enumerate(GENRES)] + ["War, then drama."]
    return embed_texts(texts)


def results(pool: MemoryPool, vectors: np.ndarray, k: int) -> list[list[tuple[str, float]]]:
    return [[(m.id, score) for m, score in pool.search(v, k)] for v in vectors]


def test_both_stores_hold_the_same_pool_and_search_it_alike(
    amem_dataset: str, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = get_environment(amem_dataset).dataset
    pools = {}
    for store, url in (("sqlite", None), ("postgres", postgres_url)):
        if url:
            monkeypatch.setenv(DATABASE_URL_ENV, url)
        else:
            monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
        pool = pools[store] = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
        for round_ in contents():
            pool.apply_all(round_)
    embedded, database = pools["sqlite"], pools["postgres"]
    assert type(embedded).__name__ == "SqlitePool" and type(database).__name__ == "PostgresPool"
    assert comparable(database) == comparable(embedded)
    assert [r["merged"] for r in database.ledger()[-3:]] == [[], ["m-u3-0"], []]
    ids = sorted(embedded.memories())
    assert np.array_equal(database.vectors(ids), embedded.vectors(ids))  # re-embedded alike, stored bit-exact
    vectors = queries()
    for k in (1, 5, 40, 41):  # exact mode in both: identical ids, order and scores
        assert results(database, vectors, k) == results(embedded, vectors, k)


def _run(args: list[str], home: Path, url: str) -> str:
    env = {**os.environ, "RECGRAPH_HOME": str(home), DATABASE_URL_ENV: url}
    done = subprocess.run(args, capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


SERVE = """
import json, sys
import numpy as np
from agents.amem4rec.retrieval import ranking_pool
from state.amem4rec.context import Amem4RecContext
from world.environment import get_environment

ctx = Amem4RecContext(dataset=sys.argv[1])
pool, note = ranking_pool(ctx, get_environment(ctx.dataset))
found = [[(m.id, s) for m, s in pool.search(v, 5)] for v in np.load(sys.argv[2])]
memories = {i: [m.behavior_explanation, m.pattern_description, m.version] for i, m in pool.memories().items()}
print(json.dumps({"fingerprint": pool.fingerprint(), "memories": memories, "found": found, "note": note}))
"""


def test_a_pool_trained_by_one_process_is_served_by_another_with_its_own_home(
    amem_dataset: str, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    homes = {name: tmp_path / f"home-{name}" for name in ("trainer", "server")}
    models = Path(os.environ["RECGRAPH_HOME"]) / "models"
    for home in homes.values():  # the exported encoder only (a 6 s export saved): no pool data
        home.mkdir()
        if models.is_dir():
            (home / "models").symlink_to(models)
    train = ["amem4rec", "train", "--dataset", amem_dataset, "--users", "4", "--windows-per-user", "3"]
    out = _run([sys.executable, "-m", "recgraph.cli", *train], homes["trainer"], postgres_url)
    assert "12 still to train" in " ".join(out.split())
    vectors = queries()
    np.save(tmp_path / "queries.npy", vectors)
    served = json.loads(
        _run(
            [sys.executable, "-c", SERVE, amem_dataset, str(tmp_path / "queries.npy")],
            homes["server"],
            postgres_url,
        )
    )
    for home in homes.values():  # nothing of the pool on disk, in either home
        assert not [p for p in home.rglob("*") if p.name in ("manifest.json", "pool.sqlite", "chroma")]
    assert "/amem4rec/pool-" in served["note"] and str(homes["trainer"]) not in served["note"]
    # The same training in this process, into the embedded store.
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    assert main([*train, "--pool", str(tmp_path / "embedded")]) == 0
    embedded = open_pool(tmp_path / "embedded", get_environment(amem_dataset).dataset)
    assert served["fingerprint"] == embedded.fingerprint()
    expected = {
        i: [m.behavior_explanation, m.pattern_description, m.version] for i, m in embedded.memories().items()
    }
    assert served["memories"] == expected
    local = results(embedded, vectors, 5)
    assert [[i for i, _ in row] for row in served["found"]] == [[i for i, _ in row] for row in local]
    for row, mine in zip(served["found"], local, strict=True):
        assert [s for _, s in row] == pytest.approx([s for _, s in mine], abs=1e-6)


def test_a_round_cut_off_by_a_restart_waits_and_commits_once(
    amem_dataset: str,
    tmp_path: Path,
    postgres_server: PostgresServer,
    postgres_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    dataset = get_environment(amem_dataset).dataset
    pool = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
    first, second, third = contents(20)
    pool.apply_all(first)
    postgres_server.stop("immediate")  # a crash: every connection is cut
    restarted = threading.Timer(1.0, postgres_server.start)
    restarted.start()
    started = time.monotonic()
    try:
        outcomes = pool.apply_all(second)
    finally:
        restarted.join()
    assert time.monotonic() - started >= 0.9  # it waited for the server rather than failing
    assert [o["status"] for o in outcomes] == ["applied"] * 10
    pool.apply_all(third)
    assert pool.size() == 20 and len(pool.ledger()) == 23
    # The same rounds in the embedded store give the same pool.
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    embedded = open_pool(tmp_path / "embedded", dataset, CONFIG, create=True)
    for round_ in (first, second, third):
        embedded.apply_all(round_)
    assert comparable(pool) == comparable(embedded)
