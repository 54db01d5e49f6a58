"""MiniLM embeddings of every user's initial (version 0) memory: MemRec's one-time per-dataset work.

On a big catalog this is the slow part of MemRec's setup (50k users: tens of thousands of texts),
so it is cached on disk per dataset and per memory texts (the digest of all of them). Users whose
initial memories are the same text share one embedding (on a 50k-user titles-only catalog 7% of
them: the same length and last three titles), so only the distinct texts are embedded, in parts of
`PART_USERS` texts, each saved as it is done: a killed run resumes from the last saved part, and
`on_progress(done, total)` says how far it is (in distinct texts).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np

from tools.memrec.graph import initial_user_memories
from world.embeddings import EMBEDDING_DIM, embed_texts
from world.environment import Environment
from world.item_vectors import save_array, text_fingerprint
from world.paths import dataset_cache

PART_USERS = 2048
"""Distinct memory texts per saved part of the cache (also MiniLM's calls: one per part)."""
PART_PREFIX = "unique"
"""Name of a saved part (`unique-00000.npy`): parts of distinct texts, never read as older
`part-*.npy` files, which held the parts of every user's text."""
RESOURCE = "memrec_user_vectors"
"""`Environment.resource` key of the vectors (one copy per dataset, whatever the memory file)."""


def cache_path(env: Environment, texts: list[str]) -> Path:
    """The cache file of these initial memories (its parts live in a folder of the same stem)."""
    return dataset_cache(env.dataset) / f"memrec_user_memories-{text_fingerprint(texts)}.npy"


def user_vectors(env: Environment, on_progress: Callable[[int, int], None] | None = None) -> np.ndarray:
    """`initial_user_vectors`, once per process and dataset (progress only when computed now)."""
    return env.resource(RESOURCE, lambda: initial_user_vectors(env, on_progress))


def initial_user_vectors(
    env: Environment, on_progress: Callable[[int, int], None] | None = None
) -> np.ndarray:
    """Row i: the embedding of `env.user_ids[i]`'s initial memory (float32), from the disk cache
    or computed part by part (see the module docstring)."""
    texts = initial_user_memories(env)
    path = cache_path(env, texts)
    if path.is_file():
        vectors = np.load(path)
        if vectors.shape == (len(texts), EMBEDDING_DIM):
            return np.ascontiguousarray(vectors, dtype=np.float32)
    distinct = list(dict.fromkeys(texts))
    parts = path.with_suffix("")
    parts.mkdir(exist_ok=True)
    blocks = []
    for start in range(0, len(distinct), PART_USERS):
        part = parts / f"{PART_PREFIX}-{start // PART_USERS:05d}.npy"
        chunk = distinct[start : start + PART_USERS]
        block = np.load(part) if part.is_file() else None
        if block is None or block.shape != (len(chunk), EMBEDDING_DIM):
            block = embed_texts(chunk)
            save_array(part, block)
        blocks.append(block)
        if on_progress:
            on_progress(start + len(chunk), len(distinct))
    if blocks:
        row_of = {text: row for row, text in enumerate(distinct)}
        vectors = np.vstack(blocks)[[row_of[text] for text in texts]]
    else:
        vectors = np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
    save_array(path, vectors)
    shutil.rmtree(parts)
    return np.ascontiguousarray(vectors, dtype=np.float32)
