"""MemRec's memory vectors the evaluated users' rankings will read, read once before ranking.

Curation reads users' memories lazily (agents/memrec/similarity_reads.py: a user neighbour's memory
only while it may still be kept; a memory Stage W changed on first read), and ReRank reads the
user's own memory. With `recgraph bench --workers N` the users are ranked in N processes, and each
one embedded, on its own, every memory its users' curations read: most neighbours are shared, so
most of those memories were embedded N times, between rankings (ml-100k, 200 users, `--workers 2`:
MemRec's ranking took 17 s reading lazily, and 4 s after an 11 s read-ahead).

`read_ahead` runs each evaluated user's curation in the prepare step, as the ranking will run it
(candidate-agnostic curation reads the user and the memory graph, nothing else), and reads the
user's own memory, so those memories are embedded there once and kept in the shared vector store;
the rankings find them. Each text is embedded on its own (`world.vector_memo.embed_each`), so a
vector is the same bits whoever embeds it, and the rankings are those of reading lazily. With
candidate-aware curation (`memrec_curation = "candidates"`) the reads depend on the candidates,
which the prepare step is not told: nothing is read ahead. A marker next to the memory file says
which users were read ahead, so the router's variants (which run this hook again as their
prerequisite, on the same memory) do not redo the curations.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.memrec.curation import curate, resolve_rule_set, rule_set_name
from agents.memrec.feature_index import feature_index
from agents.memrec.user_vectors import user_vectors
from state.memrec.context import MemRecContext
from world.environment import Environment

PROGRESS_LABEL = "read ahead"
"""The phase's progress label (users whose curation reads are done)."""


def reads_ahead(ctx: MemRecContext) -> bool:
    """Whether curation's reads can be read ahead: the collaborative read on, and the curation
    candidate-agnostic (a candidate-aware one reads what the candidates decide)."""
    return ctx.memrec_use_read and ctx.memrec_curation != "candidates"


def read_ahead(
    env: Environment,
    ctx: MemRecContext,
    users: Sequence[str],
    scenario: str,
    on_progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Read what `users`' curations and ReRank's user memory will read (see the module docstring);
    returns metrics.json's `read_ahead` figures (empty when nothing is read ahead)."""
    if not reads_ahead(ctx) or not users:
        return {}
    # Once per memory and set of users: the router's variants run this hook again on the same
    # memory (their prerequisite), and would only redo the curations
    marker = Path(f"{ctx.memrec_memory}.read-ahead")
    local = bool(ctx.memrec_memory) and marker.parent.is_dir()  # a file, not a database URL
    key = hashlib.sha256("\x1f".join([scenario, *sorted(users)]).encode()).hexdigest()
    if local and marker.is_file() and marker.read_text(encoding="utf-8") == key:
        return {"users": len(users), "done_before": True}
    started = time.perf_counter()
    index = feature_index(env, ctx.memrec_memory)
    vectors = user_vectors(env)
    texts_before, changed_before = vectors.texts_read(), index.changed_read
    rule_set = resolve_rule_set(ctx, env, rule_set_name(ctx, env))
    updated = index.updated_vectors()
    for done, user in enumerate(users, 1):
        curate(
            index, rule_set, user, [], ctx.memrec_k, ctx.memrec_min_users, ctx.memrec_min_items,
            env.history(user, scenario), reads_per_kept=ctx.memrec_similarity_reads or None,
        )  # fmt: skip
        index.user_vector(user, updated)
        if on_progress:
            on_progress(done, len(users))
    if local:
        marker.write_text(key, encoding="utf-8")
    return {
        "users": len(users),
        "initial_texts": vectors.texts_read() - texts_before,
        "changed_texts": index.changed_read - changed_before,
        "seconds": round(time.perf_counter() - started, 3),
    }
