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
visible history get the N most popular items in training instead. The search is
`tools.catalog_index.recall_set`, the recall stage ARAG's and the other methods' retrieve modes use.
Each case keeps whether the retrieval found its target (`Retrieved.recalled`, `EvalCase.recalled`):
the share of such users is metrics.json's `recall@N`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tools.catalog_index import recall_set
from tools.user_context import SESSION_ITEMS, user_split
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
    found = recall_set(env, *user_split(env, user_id, history, SESSION_ITEMS), n, exclude)
    if len(found) < n:
        raise ProtocolError(
            f"user {user_id!r} has only {len(found)} retrievable items; cannot make {n} candidates"
        )
    recalled = target in found
    if not recalled:
        found[-1] = target
    order = user_rng(seed, user_id).permutation(len(found))
    return Retrieved([found[i] for i in order], recalled)
