"""Which user neighbours' memory_similarity_score curation must read to rank exactly.

The other four features are cheap (the training graph's arrays); memory_similarity_score needs the
neighbour's memory embedded (MiniLM), and a user's 2-hop neighbourhood is often a thousand users
and more: 300 users of a 50k-user catalog reach most of its users. Curation keeps the top k
neighbours with floors of users and items (`select_top`), so the users it can keep are the best k
users by score. With memory_similarity_score unknown in [0, 1], every user's score has a range
(`agents.memrec.rule_bounds.score_bounds`); the users are read best upper bound first, in batches
of `READ_BATCH`, until k users are known whose k-th best score is above every unread user's upper
bound. The unread users then rank below all k, so the kept neighbours, their order and their
scores are those of reading every user.

When the other features leave many users close (a titles-only catalog with the generic rules: a
user's k-th best score stays below most upper bounds until nearly every user is read), reading
stops after `READS_PER_KEPT` x k users, the best upper bounds: the users not read rank below those
read.
Against reading every one, on ml-100k (80 users, k=16: 64 reads) the curated neighbours were the same for
80/80 users with the generic rules and 57/80 with movietv (97% of them in common); on a 50k-user
titles-only catalog 91% in common, from 12.8k memories read for 300 users instead of 41k.
"""

from __future__ import annotations

import numpy as np

from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import NeighbourFeatures, read_user_similarity
from agents.memrec.rule_bounds import score_bounds
from agents.memrec.rule_scoring import score_neighbours
from agents.memrec.rules import FEATURES, RuleSet

SIMILARITY = FEATURES.index("memory_similarity_score")
"""Column of memory_similarity_score in the feature matrix."""
SIMILARITY_HIGH = 1.0 + 1e-6
"""Upper end of a clipped cosine of two unit float32 vectors (1 plus rounding)."""
READ_BATCH = 16
"""User neighbours read per step (each step embeds at most this many memories)."""
READS_PER_KEPT = 4
"""Most user neighbours a curation reads per neighbour it keeps (`curate`'s default: 64 for the
ranking's k=16, 36 for Stage W's 9): past it, the users not read yet rank below those read, so the
result may differ from reading every memory (see the module docstring)."""


def read_needed(
    index: FeatureIndex, rule_set: RuleSet, found: NeighbourFeatures, k: int, cap: int | None = None
) -> np.ndarray:
    """Read the memory_similarity_score (NaN in `found.matrix`) of the users that may be among the
    best `k` users by score, at most `cap` of them (None: no limit); returns the mask of rows left
    unread (still NaN)."""
    matrix, is_item = found.matrix, found.is_item
    unread = np.isnan(matrix[:, SIMILARITY])
    users = ~is_item
    want = min(k, int(users.sum()))
    if want <= 0 or not unread.any():
        return unread
    pending = np.flatnonzero(unread)
    low, high = matrix[pending].copy(), matrix[pending].copy()
    low[:, SIMILARITY], high[:, SIMILARITY] = 0.0, SIMILARITY_HIGH
    _, upper = score_bounds(rule_set, low, high, is_item[pending])
    order = np.argsort(-upper, kind="stable")
    pending, upper = pending[order], upper[order]
    known = np.flatnonzero(users & ~unread)
    scores = score_neighbours(rule_set, matrix[known], is_item[known]) if len(known) else np.zeros(0)
    done = 0
    limit = len(pending) if cap is None else min(len(pending), max(cap, want))
    while done < limit:
        if len(scores) >= want and upper[done] < np.partition(scores, len(scores) - want)[-want]:
            break
        batch = pending[done : min(done + READ_BATCH, limit)]
        read_user_similarity(index, found, batch)
        scores = np.concatenate([scores, score_neighbours(rule_set, matrix[batch], is_item[batch])])
        done += len(batch)
    unread[pending[:done]] = False
    return unread
