"""ARAG's recall stage in retrieve mode (paper 4.2.1): I⁰ = argtop_k sim(f_Emb(i), f_Emb(u)).

The query is the user context's embedding (`tools.user_context.context_vector` over this user's
(C_lt, C_st)), the same one the benchmark's `retrieval` candidate source uses
(`bench.retrieval_candidates`); here it searches the Chroma catalog index, excluding the visible
history. Users without history get the most popular unseen items.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.arag.signals import session_context
from state.arag.context import AragContext
from tools.catalog_index import catalog_index, unseen_items
from tools.similarity import similarity_order
from tools.user_context import context_vector, split_context
from world.environment import Environment


def recall_from_catalog(
    env: Environment, ctx: AragContext, user_id: str, history: Sequence[str], k: int
) -> list[str]:
    """The `k` catalog items nearest f_Emb(u), the visible history left out."""
    seen = set(history)
    session = session_context(ctx, env, user_id, history).arag_session_items
    query = context_vector(env, *split_context(history, session))
    if query is None:
        return similarity_order(env, [], unseen_items(env, history))[:k]
    found = catalog_index(env).search(query, min(len(env.item_ids), k + len(seen)))
    return [item for item in found if item not in seen][:k]
