"""ARAG's user context u = (C_lt, C_st) and its embedding f_Emb(u) (paper 4.2, 4.2.1).

- The current session C_st is the trailing run of the visible history whose consecutive
  interactions are at most `gap_hours` apart, capped at `session_items` items, when the dataset has
  real timestamps and the history is the user's own visible history; otherwise (order-only data, a
  history the split does not know) the last `session_items` items. The long-term context C_lt is
  everything before C_st. Only the visible history's own times are read, never the target's.
- f_Emb(u) (ours: the paper does not say how u is embedded): the MiniLM item vectors averaged per
  part and blended, ``normalise(0.7 · mean(C_st) + 0.3 · mean(C_lt))``, so the session dominates and
  the long-term tastes are a prior (one part empty: the other alone).

The retrieval candidate source (`bench.protocol.retrieval_candidates`), ARAG's retrieve mode and its NLI
fallback, and the Vanilla RAG baseline all read the user context through this module.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tools.similarity import profile_vector
from world.environment import Environment

SESSION_ITEMS = 5
"""Default cap on the current session C_st (ARAG's `arag_session_items` default)."""
SESSION_GAP_HOURS = 24.0
"""Default largest gap, in hours, between two interactions of one session."""
SESSION_BLEND = 0.7
"""Weight of the session centroid in f_Emb(u) (the long-term centroid gets the rest)."""


def history_times(env: Environment, user_id: str, history: Sequence[str]) -> list[float] | None:
    """The timestamps of `history` when the dataset has real times and `history` is the tail of the
    user's split before the target (every scenario's visible history is); None otherwise."""
    if not env.dataset.has_time or not history:
        return None
    case = env.cases.get(user_id)
    events = case.before_target() if case is not None else ()
    if len(history) > len(events):
        return None
    tail = events[len(events) - len(history) :]
    if [e.item_id for e in tail] != list(history):
        return None
    return [e.timestamp for e in tail]


def session_length(
    history: Sequence[str],
    session_items: int,
    times: Sequence[float] | None = None,
    gap_hours: float = SESSION_GAP_HOURS,
) -> int:
    """How many trailing items of `history` form the current session (see the module docstring)."""
    cap = min(max(session_items, 0), len(history))
    if times is None or gap_hours <= 0 or cap == 0:
        return cap
    gap, start = gap_hours * 3600.0, len(history) - 1
    while start > 0 and len(history) - start < cap and times[start] - times[start - 1] <= gap:
        start -= 1
    return len(history) - start


def split_context(
    history: Sequence[str],
    session_items: int,
    times: Sequence[float] | None = None,
    gap_hours: float = SESSION_GAP_HOURS,
) -> tuple[list[str], list[str]]:
    """(C_lt, C_st): the current session (`session_length`) and everything before it."""
    cut = len(history) - session_length(history, session_items, times, gap_hours)
    return list(history[:cut]), list(history[cut:])


def user_split(
    env: Environment,
    user_id: str,
    history: Sequence[str],
    session_items: int = SESSION_ITEMS,
    gap_hours: float = SESSION_GAP_HOURS,
) -> tuple[list[str], list[str]]:
    """(C_lt, C_st) of a user's visible history, split by time where the dataset has times."""
    return split_context(history, session_items, history_times(env, user_id, history), gap_hours)


def context_vector(env: Environment, long_term: Sequence[str], session: Sequence[str]) -> np.ndarray | None:
    """f_Emb(u): the session centroid blended with the long-term centroid (None: no history)."""
    recent, lasting = profile_vector(env, session), profile_vector(env, long_term)
    if recent is None:
        return lasting
    if lasting is None:
        return recent
    blend = SESSION_BLEND * recent + (1 - SESSION_BLEND) * lasting
    return blend / (np.linalg.norm(blend) or 1.0)


def recall_top(
    env: Environment, query: np.ndarray, k: int, exclude: set[str] | frozenset[str] = frozenset()
) -> list[str]:
    """I⁰ = argtop_k cos(f_Emb(i), query) over the catalog minus `exclude`, exact (a full scan of the
    item vectors); ties keep catalog order."""
    scores = np.asarray(env.item_vectors() @ query, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    found: list[str] = []
    for row in order.tolist():
        item = env.item_ids[row]
        if item not in exclude:
            found.append(item)
            if len(found) == k:
                break
    return found
