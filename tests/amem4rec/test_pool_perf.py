"""Pool throughput, embedded (SQLite + Chroma, numpy scoring) against PostgreSQL + pgvector, on this
machine: rounds applied (windows/s, the pool's share of training) and searches (queries/s, k=5) at
the size of the ml-100k pool `make bench` trains (942 memories from 2,000 windows) and at 20,000
(the largest pool still searched exactly; windows/s over its last 942); then each store's index on
the 20,000 (Chroma's HNSW, pgvector's HNSW: speed, and how much of the exact top 5 it finds).
Run: `.venv/bin/pytest tests/amem4rec/test_pool_perf.py -m perf -s`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pytest

from tests.amem4rec.test_pool import CONFIG
from tools.amem4rec import pool as memory_pool
from tools.amem4rec.folder import forget_pool, open_pool
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.record import encode_vector
from world.database import DATABASE_URL_ENV
from world.embeddings import EMBEDDING_DIM
from world.environment import get_environment

pytestmark = pytest.mark.perf
ROUND = 16
"""Windows per round, as `amem4rec_round_windows` defaults."""
QUERIES = 300


def unit_vectors(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 300 topics (cosine ~0.7 to their topic), closer to sentence embeddings
    than uniform noise, on which no approximate index finds much (every pair is about orthogonal)."""
    topics = np.random.default_rng(0).standard_normal((300, EMBEDDING_DIM))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    rng = np.random.default_rng(seed)
    vectors = topics[rng.integers(0, 300, count)] + rng.normal(0, 0.05, (count, EMBEDDING_DIM))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def plans(vectors: np.ndarray, start: int) -> list[dict]:
    return [
        {
            "window_key": f"u{n}:0",
            "user_id": f"u{n}",
            "action": "store_only",
            "store": True,
            "memory": {
                "id": f"m-{n}",
                "behavior_explanation": f"Tendency {n % 97}.",
                "pattern_description": f"Sequence {n % 89}.",
                "embedding": encode_vector(v),
            },
            "rewrites": [],
            "linked": [],
            "usage": [],
        }
        for n, v in enumerate(vectors, start=start)
    ]


def fill(pool: MemoryPool, vectors: np.ndarray, timed: int) -> float:
    """Apply stores until the pool holds `vectors`, the last `timed` in rounds of `ROUND` (the rest
    in big rounds, untimed); windows per second of the timed ones."""
    todo = plans(vectors[pool.size() :], pool.size())
    for start in range(0, len(todo) - timed, 1000):
        pool.apply_all(todo[start : min(start + 1000, len(todo) - timed)])
    todo = todo[len(todo) - timed :]
    started = time.perf_counter()
    for start in range(0, len(todo), ROUND):
        pool.apply_all(todo[start : start + ROUND])
    return len(todo) / (time.perf_counter() - started)


def searches(pool: MemoryPool, queries: np.ndarray) -> tuple[float, list[list[str]]]:
    """Queries per second (k=5, one after another) and the ids found."""
    pool.search(queries[0], 5)  # warm: connections, plans
    started = time.perf_counter()
    found = [[m.id for m, _ in pool.search(q, 5)] for q in queries]
    return len(queries) / (time.perf_counter() - started), found


def test_pool_throughput_embedded_and_postgres(
    amem_dataset: str, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    dataset = get_environment(amem_dataset).dataset
    vectors, queries = unit_vectors(20_000, 1), unit_vectors(QUERIES, 2)
    rows, found = [], {}
    for store, url in (("sqlite+chroma", None), ("postgres+pgvector", postgres_url)):
        if url:
            monkeypatch.setenv(DATABASE_URL_ENV, url)
        else:
            monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
        pool = open_pool(tmp_path / "pool", dataset, CONFIG, create=True)
        for size in (942, 20_000):
            windows_per_s = fill(pool, vectors[:size], 942)
            qps, found[store, size] = searches(pool, queries)
            rows.append((store, size, "exact", windows_per_s, qps))
        forget_pool(tmp_path / "pool")
    for size in (942, 20_000):  # exact in both: the same memories
        assert found["sqlite+chroma", size] == found["postgres+pgvector", size]
    monkeypatch.setattr(memory_pool, "EXACT_UP_TO", 10_000)  # the 20,000 now count as a big pool
    for store, url in (("sqlite+chroma", None), ("postgres+pgvector", postgres_url)):
        if url:
            monkeypatch.setenv(DATABASE_URL_ENV, url)
        else:
            monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
        started = time.perf_counter()
        pool = open_pool(tmp_path / "pool", dataset)  # PostgreSQL builds the pool's HNSW index here
        pool.search(queries[0], 5)  # Chroma's index is built (synced) on the first big search
        built = time.perf_counter() - started
        qps, approximate = searches(pool, queries)
        exact = found[store.replace("postgres+pgvector", "sqlite+chroma"), 20_000]
        recall = np.mean([len(set(a) & set(e)) / 5 for a, e in zip(approximate, exact, strict=True)])
        rows.append((store, 20_000, f"index (ready in {built:.1f} s, recall@5 {recall:.3f})", 0.0, qps))
        forget_pool(tmp_path / "pool")
    print(f"\nload average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"{'store':<20}{'memories':>9}  {'search':<40}{'windows/s':>10}{'queries/s':>11}")
    for store, size, mode, windows_per_s, qps in rows:
        print(f"{store:<20}{size:>9}  {mode:<40}{windows_per_s:>10.0f}{qps:>11.1f}")
