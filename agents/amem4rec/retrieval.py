"""Which pool a run uses, and the inference-time retrieval of the K memories closest to a user's
recent history (its titles and categories, embedded with MiniLM).

A harness that knows its users before ranking (bench's prepare hooks) embeds their query texts in
large batches first (`embed_queries`): one MiniLM call per user was most of a ranked user's CPU
(~12 ms of ~15 ms on this 2-core machine), and batched texts cost a fraction of that each. The
vectors are also saved in the pool's folder (`QUERY_FILE`), so the processes of `bench --workers N`
read them instead of embedding each query alone.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from state.amem4rec.context import Amem4RecContext
from state.context import backend_for
from tools.amem4rec.folder import open_pool, pool_config, pool_exists, pool_location
from tools.amem4rec.pool import MemoryPool
from world.embeddings import embed_texts
from world.environment import Environment
from world.item_vectors import save_arrays


def training_pool(ctx: Amem4RecContext, env: Environment) -> MemoryPool:
    """The pool a training run writes (created when missing; refused if built otherwise)."""
    return open_pool(
        pool_location(ctx, env.dataset),
        env.dataset,
        pool_config(ctx),
        create=True,
        backend=backend_for(ctx, "mem"),
    )


def ranking_pool(ctx: Amem4RecContext, env: Environment) -> tuple[MemoryPool | None, str]:
    """The pool a ranking reads, and a note. An explicit `amem4rec_pool` must exist; a missing default
    pool means no memories (the note says how to train one)."""
    location = pool_location(ctx, env.dataset)
    if not ctx.amem4rec_pool and not pool_exists(location):
        return None, (
            f"no trained pool at {location}: ranking without memories (train one with "
            f"`recgraph amem4rec train --dataset {ctx.dataset}`)"
        )
    pool = open_pool(location, env.dataset)
    return pool, f"pool {location} ({pool.size()} memories)"


QUERY_CACHE_SIZE = 1 << 16
"""Query vectors kept per process (forgotten all at once past it)."""
QUERY_FILE = "query_vectors.npz"
"""File in a pool's folder holding the query vectors embedded for its runs (texts and vectors)."""
_query_vectors: dict[str, np.ndarray] = {}
_query_files_read: set[Path] = set()
_query_lock = threading.Lock()


def recent_items(history: Sequence[str], count: int) -> list[str]:
    """The most recent `count` visible history items (all for 0), oldest first."""
    return list(history[-count:]) if count > 0 else list(history)


def history_query(env: Environment, items: Sequence[str]) -> str:
    """The recent history as one text: titles with their categories, most recent last."""
    parts = []
    for item_id in items:
        item = env.dataset.items[item_id]
        parts.append(item.title + (f" ({', '.join(item.categories)})" if item.categories else ""))
    return "; ".join(parts)


def _saved_queries(path: Path) -> dict[str, np.ndarray]:
    """The query vectors saved at `path` (none when there is no file)."""
    if not path.is_file():
        return {}
    with np.load(path) as saved:
        return dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))


def _remember_saved(path: Path, saved: dict[str, np.ndarray]) -> None:
    """Add a read query file's vectors to this process's cache; the file counts as read."""
    with _query_lock:
        _query_files_read.add(path)
        for text, vector in saved.items():
            _query_vectors.setdefault(text, vector)


def embed_queries(queries: Sequence[str], folder: Path | None = None) -> int:
    """Embed, in large batches, the query texts this process has no vector for yet (a run's users,
    before they are ranked); with `folder` (a pool's), the vectors saved there are used first and
    those of every text in `queries` are saved there too, beside earlier runs'. Returns how many
    were embedded now."""
    path = folder / QUERY_FILE if folder is not None else None
    saved = _saved_queries(path) if path is not None else {}
    if path is not None:
        _remember_saved(path, saved)
    wanted = list(dict.fromkeys(q for q in queries if q))
    with _query_lock:
        found = {q: _query_vectors[q] for q in wanted if q in _query_vectors}
    missing = [q for q in wanted if q not in found]
    if missing:
        found.update(zip(missing, embed_texts(missing), strict=True))
        with _query_lock:
            if len(_query_vectors) + len(missing) > QUERY_CACHE_SIZE:
                _query_vectors.clear()
            _query_vectors.update((q, found[q]) for q in missing)
    if path is not None and any(q not in saved for q in wanted):
        saved.update(found)
        texts, vectors = np.array(list(saved)), np.array(list(saved.values()), dtype=np.float32)
        path.parent.mkdir(parents=True, exist_ok=True)  # a pool in the database has no folder of its own
        save_arrays(path, texts=texts, vectors=vectors)
    return len(missing)


def query_vector(query: str, folder: Path | None = None) -> np.ndarray:
    """The MiniLM vector of a query text: embedded ahead by `embed_queries` (in this process, or
    saved in the pool `folder`, read once per process), else now."""
    with _query_lock:
        vector = _query_vectors.get(query)
    if vector is None and folder is not None:
        path = folder / QUERY_FILE
        with _query_lock:
            unread = path not in _query_files_read
        if unread:
            _remember_saved(path, _saved_queries(path))
            with _query_lock:
                vector = _query_vectors.get(query)
    return vector if vector is not None else embed_texts([query])[0]


def retrieve_memories(pool: MemoryPool | None, query: str, k: int) -> list[dict[str, Any]]:
    """The top-k memories for a query text, most similar first (none without a pool or a query)."""
    if pool is None or not query or k <= 0:
        return []
    # A pool in the database has no folder; its name is where a bench run saved its queries' vectors.
    folder = pool.folder if pool.folder is not None else Path(pool.location)
    found = pool.search(query_vector(query, folder), k)
    return [
        {
            "id": memory.id,
            "score": score,
            "behavior_explanation": memory.behavior_explanation,
            "pattern_description": memory.pattern_description,
            "evolution_count": memory.evolution_count,
        }
        for memory, score in found
    ]
