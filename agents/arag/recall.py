"""ARAG's recall stage in retrieve mode (paper 4.2.1): I⁰ = argtop_k sim(f_Emb(i), f_Emb(u)).

The query is the user context's embedding over this user's (C_lt, C_st), split as every ARAG agent
splits it (`agents.arag.signals.session_context`); the search is `tools.catalog_index.recall_set`,
the one the benchmark's `retrieval` candidate source uses, excluding the visible history. Users
without history get the most popular unseen items.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.arag.signals import session_context
from state.arag.context import AragContext
from tools.catalog_index import recall_set
from tools.user_context import split_context
from world.environment import Environment


def recall_from_catalog(
    env: Environment, ctx: AragContext, user_id: str, history: Sequence[str], k: int
) -> list[str]:
    """The `k` catalog items nearest f_Emb(u), the visible history left out."""
    session = session_context(ctx, env, user_id, history).arag_session_items
    return recall_set(env, *split_context(history, session), k, set(history))
