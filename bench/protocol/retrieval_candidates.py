"""The two retrieval candidate sources: ARAG's recall stage I⁰ as every method's candidate set.

ARAG's agents judge a recall set that an embedding retrieval took from the whole catalog (paper
4.2.1), so its items are similar to the user's history, whether relevant or not. Both sources start
from the same retrieval: the items ranked by cosine between their MiniLM vector and f_Emb(u), the
user context's embedding (`tools.user_context`: (C_lt, C_st) of the visible history, the session
split by time where the dataset has timestamps, at most `SESSION_ITEMS` items), over the catalog
minus everything the user interacted with except the target (the visible history, as in the paper,
and the other held-out interactions, so that no negative is a hidden positive, the rule the uniform
source follows). Exact full scan, ties in catalog order: deterministic.

- `retrieval` (the honest pipeline): the candidates are I⁰, the top N, as retrieved. When the
  retrieval missed the target it is not among them, and the user scores 0 at every cutoff (a
  recommender that never shows the item cannot rank it). metrics.json reports every method over all
  users and, beside it (`on_recalled`), over the users whose target was recalled, with the
  retrieval's own recall@N.
- `retrieval_negatives`: the target plus N−1 negatives drawn (seeded, without replacement) from the
  top K of the retrieval (K = `retrieval_pool`, at least 5N; the target left out of the draw). Every
  negative is then like the history too, so the target is not the only item unlike it, as it was
  when a missed target was swapped into I⁰ (an odd-one-out task that pushed every similarity ranker
  toward zero).

Use `retrieval` to measure a retrieve-then-rank system end to end (its ceiling is recall@N);
`retrieval_negatives` to compare rankers on hard, history-like negatives; `auto` (uniform negatives,
or the dataset's pools) to compare with the papers' sampled-negative tables.

Either set is shuffled with the user's seeded generator, so its order says nothing about retrieval
scores. Only the visible history (what the scenario shows the user) enters the query. Users without
a visible history get the most popular items in training instead. The search is
`tools.catalog_index.recall_set`, the recall stage ARAG's and the other methods' retrieve modes use.
Each case keeps whether the top N held the target (`Retrieved.recalled`, `EvalCase.recalled`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tools.catalog_index import recall_set
from tools.user_context import SESSION_ITEMS, user_split
from world.environment import Environment
from world.errors import ProtocolError
from world.seeding import user_rng

RETRIEVAL_SOURCES = ("retrieval", "retrieval_negatives")
"""The candidate sources this module makes (`--candidate-source`)."""
POOL_FACTOR = 5
"""`retrieval_negatives` draws from at least the top POOL_FACTOR x N of the retrieval."""


@dataclass(frozen=True)
class Retrieved:
    """One user's retrieval candidates."""

    candidates: list[str]
    """The N candidates in a seeded shuffled order (`retrieval`: the target only when recalled)."""
    recalled: bool
    """Whether the retrieval's top N held the target."""


def pool_size(n: int, retrieval_pool: int) -> int:
    """K, the top of the retrieval `retrieval_negatives` draws from: `retrieval_pool`, at least 5N."""
    return max(retrieval_pool, POOL_FACTOR * n)


def retrieval_candidates(
    env: Environment,
    *,
    user_id: str,
    target: str,
    n: int,
    history: Sequence[str],
    interacted: Collection[str],
    seed: int,
    source: str = "retrieval",
    retrieval_pool: int = 0,
) -> Retrieved:
    """The user's N candidates from `source` (module docstring); `interacted` holds the user's
    items other than the target, `history` the visible ones the query reads."""
    if n < 2:
        raise ProtocolError(f"--candidates must be at least 2 (the target and a negative), got {n}")
    if source not in RETRIEVAL_SOURCES:
        raise ProtocolError(f"unknown retrieval source {source!r}; expected one of {RETRIEVAL_SOURCES}")
    exclude = set(interacted) - {target}
    depth = n if source == "retrieval" else pool_size(n, retrieval_pool)
    found = recall_set(env, *user_split(env, user_id, history, SESSION_ITEMS), depth, exclude)
    if len(found) < n:
        raise ProtocolError(
            f"user {user_id!r} has only {len(found)} retrievable items; cannot make {n} candidates"
        )
    recalled = target in found[:n]
    rng = user_rng(seed, user_id)
    if source == "retrieval_negatives":
        others = [item for item in found if item != target]
        drawn = rng.choice(len(others), size=n - 1, replace=False)
        found = [target, *(others[i] for i in sorted(drawn.tolist()))]
    else:
        found = found[:n]
    order = rng.permutation(len(found))
    return Retrieved([found[i] for i in order], recalled)
