"""Which pool a run uses, and the inference-time retrieval of the K memories closest to a user's
recent history (its titles and categories, embedded with MiniLM)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from state.context import Context, backend_for
from tools.memory_pool import MemoryPool
from tools.memory_pool_folder import open_pool, pool_config, pool_dir
from world.embeddings import embed_texts
from world.environment import Environment


def training_pool(ctx: Context, env: Environment) -> MemoryPool:
    """The pool a training run writes (created when missing; refused if built otherwise)."""
    return open_pool(
        pool_dir(ctx, env.dataset),
        env.dataset,
        pool_config(ctx),
        create=True,
        backend=backend_for(ctx, "mem"),
    )


def ranking_pool(ctx: Context, env: Environment) -> tuple[MemoryPool | None, str]:
    """The pool a ranking reads, and a note. An explicit `amem_pool` must exist; a missing default
    pool means no memories (the note says how to train one)."""
    folder = pool_dir(ctx, env.dataset)
    if not ctx.amem_pool and not (folder / "manifest.json").is_file():
        return None, (
            f"no trained pool at {folder}: ranking without memories (train one with "
            f"`recgraph amem4rec train --dataset {ctx.dataset}`)"
        )
    pool = open_pool(folder, env.dataset)
    return pool, f"pool {folder} ({pool.size()} memories)"


def history_query(env: Environment, items: Sequence[str]) -> str:
    """The recent history as one text: titles with their categories, most recent last."""
    parts = []
    for item_id in items:
        item = env.dataset.items[item_id]
        parts.append(item.title + (f" ({', '.join(item.categories)})" if item.categories else ""))
    return "; ".join(parts)


def retrieve_memories(pool: MemoryPool | None, query: str, k: int) -> list[dict[str, Any]]:
    """The top-k memories for a query text, most similar first (none without a pool or a query)."""
    if pool is None or not query or k <= 0:
        return []
    found = pool.search(embed_texts([query])[0], k)
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
