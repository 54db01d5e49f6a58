"""Retrieval from the whole catalog: the recall stage every retrieve mode and the `retrieval`
candidate source go through (`recall_set`, an exact scan of the item vectors)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tools.similarity import similarity_order
from tools.user_context import SESSION_ITEMS, context_vector, recall_top, split_context, user_split
from world.environment import Environment


def unseen_items(env: Environment, history: Sequence[str]) -> list[str]:
    """Catalog items not in the visible history: the pool for retrieve mode."""
    seen = set(history)
    return [item for item in env.item_ids if item not in seen]


def recall_set(
    env: Environment, long_term: Sequence[str], session: Sequence[str], k: int, exclude: Collection[str]
) -> list[str]:
    """The recall stage I⁰ = argtop_k cos(f_Emb(i), f_Emb(u)) (ARAG 4.2.1), for the user context
    u = (`long_term`, `session`) (`tools.user_context`), over the catalog minus `exclude`: an exact
    full scan, ties in catalog order, so it is deterministic. Without a context (no history), the `k`
    most popular items not excluded. The benchmark's `retrieval` candidate source, ARAG's retrieve mode
    and every other method's retrieve mode (`retrieve_candidates`) all call this one function."""
    query = context_vector(env, long_term, session)
    if query is None:
        return similarity_order(env, [], [item for item in env.item_ids if item not in exclude])[:k]
    return recall_top(env, query, k, set(exclude))


def retrieve_candidates(
    env: Environment, history: Sequence[str], k: int, user_id: str | None = None
) -> list[str]:
    """Retrieve mode: `recall_set` for the user context of `history`, the history left out. The
    session is split by time when `user_id` is given and the dataset has timestamps, else it is the
    last `SESSION_ITEMS` items."""
    if user_id is None:
        context = split_context(history, SESSION_ITEMS)
    else:
        context = user_split(env, user_id, history, SESSION_ITEMS)
    return recall_set(env, *context, k, set(history))
