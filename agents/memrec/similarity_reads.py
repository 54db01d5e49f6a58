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
    best `k` users by score, at most `cap` of them with an initial memory (None: no limit); returns
    the mask of rows left unread (still NaN).

    Users whose memory Stage W changed are not counted against `cap`, and the result is as if every
    one of them were read first (as it was when they were all embedded before ranking); they are
    read lazily, best upper bound first, only while one may still be among the best k of those
    known (`settle`), so the rest rank below every kept user whatever their score."""
    matrix, is_item = found.matrix, found.is_item
    unread = np.isnan(matrix[:, SIMILARITY])
    users = ~is_item
    want = min(k, int(users.sum()))
    if want <= 0 or not unread.any():
        return unread
    rows = np.flatnonzero(unread)
    low, high = matrix[rows].copy(), matrix[rows].copy()
    low[:, SIMILARITY], high[:, SIMILARITY] = 0.0, SIMILARITY_HIGH
    _, bounds = score_bounds(rule_set, low, high, is_item[rows])
    order = np.argsort(-bounds, kind="stable")
    rows, bounds = rows[order], bounds[order]
    lazy = found.changed[rows]
    pending, upper = rows[~lazy], bounds[~lazy]
    changed, changed_upper = rows[lazy], bounds[lazy]
    known = np.flatnonzero(users & ~unread)
    scores = score_neighbours(rule_set, matrix[known], is_item[known]) if len(known) else np.zeros(0)
    taken = 0

    def read(batch: np.ndarray) -> None:
        nonlocal scores
        read_user_similarity(index, found, batch)
        scores = np.concatenate([scores, score_neighbours(rule_set, matrix[batch], is_item[batch])])

    def settle() -> None:
        """Read changed users until none left unread can reach the k-th best score read."""
        nonlocal taken
        while taken < len(changed) and not (len(scores) >= want and changed_upper[taken] < kth(scores, want)):
            batch = changed[taken : taken + READ_BATCH]
            read(batch)
            taken += len(batch)

    done = 0
    limit = len(pending) if cap is None else min(len(pending), max(cap, want))
    while done < limit:
        if len(scores) + len(changed) - taken >= want:
            settle()
            if upper[done] < kth(scores, want):
                break
        batch = pending[done : min(done + READ_BATCH, limit)]
        read(batch)
        done += len(batch)
    settle()
    unread[pending[:done]] = False
    unread[changed[:taken]] = False
    return unread


def kth(scores: np.ndarray, want: int) -> float:
    """The `want`-th best of `scores` (at least `want` of them)."""
    return float(np.partition(scores, len(scores) - want)[-want])
