"""The `retrieval` candidate source: ARAG's recall stage I⁰ as every method's candidate set.

ARAG's agents judge a recall set that an embedding retrieval took from the whole catalog (paper
4.2.1), so its items are similar to the user's history, whether relevant or not. Here each user's
candidates are:

1. I⁰ = the top-N items by cosine between their MiniLM vector and f_Emb(u), the user context's
   embedding (`tools.user_context`: (C_lt, C_st) of the visible history, the session split by
   time where the dataset has timestamps, at most `SESSION_ITEMS` items), over the catalog minus
   everything the user interacted with except the target (the visible history, as in the paper,
   and the other held-out interactions, so that no negative is a hidden positive, the rule the
   uniform source follows). Exact full scan, ties in catalog order: deterministic.
2. When I⁰ missed the target, the target replaces the lowest-ranked retrieved item, so every method
   ranks a set that holds the target, as in the other sources.
3. The set is shuffled with the user's seeded generator, so its order says nothing about retrieval
   scores or where the target came in.

Only the visible history (what the scenario shows the user) enters the query. Users without a
visible history get the N most popular items in training instead. `retrieval_recall` is the share
of users whose target the retrieval itself found: metrics.json reports it as `recall@N`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from tools.similarity import similarity_order
from tools.user_context import SESSION_ITEMS, context_vector, recall_top, user_split
from world.environment import Environment
from world.errors import ProtocolError
from world.seeding import user_rng


@dataclass(frozen=True)
class Retrieved:
    """One user's retrieval candidates."""

    candidates: list[str]
    """The N candidates (the target among them), in a seeded shuffled order."""
    recalled: bool
    """Whether the retrieval itself found the target (False: the target replaced the lowest item)."""


def recall_set(
    env: Environment, user_id: str, history: Sequence[str], n: int, exclude: Collection[str]
) -> list[str]:
    """I⁰: the top-`n` catalog items for the user context of `history`, none of `exclude`."""
    query = context_vector(env, *user_split(env, user_id, history, SESSION_ITEMS))
    if query is None:
        unseen = [item for item in env.item_ids if item not in exclude]
        return similarity_order(env, [], unseen)[:n]
    return recall_top(env, query, n, set(exclude))


def retrieval_candidates(
    env: Environment,
    *,
    user_id: str,
    target: str,
    n: int,
    history: Sequence[str],
    interacted: Collection[str],
    seed: int,
) -> Retrieved:
    """The user's N retrieval candidates (module docstring); `interacted` holds the user's items
    other than the target, `history` the visible ones the query reads."""
    if n < 2:
        raise ProtocolError(f"--candidates must be at least 2 (the target and a negative), got {n}")
    exclude = set(interacted) - {target}
    found = recall_set(env, user_id, history, n, exclude)
    if len(found) < n:
        raise ProtocolError(
            f"user {user_id!r} has only {len(found)} retrievable items; cannot make {n} candidates"
        )
    recalled = target in found
    if not recalled:
        found[-1] = target
    order = user_rng(seed, user_id).permutation(len(found))
    return Retrieved([found[i] for i in order], recalled)


def retrieval_recall(
    env: Environment, cases: Iterable[tuple[str, str]], n: int, scenario: str
) -> float | None:
    """recall@N of the retrieval stage: the share of (user, target) pairs whose target I⁰ found
    (None without users)."""
    hits = []
    for user_id, target in cases:
        history = env.history(user_id, scenario)
        exclude = env.interacted(user_id) - {target}
        hits.append(target in recall_set(env, user_id, history, n, exclude))
    return sum(hits) / len(hits) if hits else None
