"""Reproducible per-user candidate sets: target + N-1 negatives, shuffled."""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from world.errors import ProtocolError
from world.seeding import user_rng


def sample_candidates(
    *,
    user_id: str,
    target: str,
    n: int,
    catalog: Sequence[str],
    interacted: Collection[str],
    seed: int,
    pool: Sequence[str] | None = None,
) -> list[str]:
    """Target plus `n - 1` negatives, in a seeded shuffled order.

    Negatives come uniformly from `pool` (a dataset's pre-generated candidates) when
    given, else from `catalog` items the user never interacted with.
    """
    if n < 2:
        raise ProtocolError(f"--candidates must be at least 2 (the target and a negative), got {n}")
    rng = user_rng(seed, user_id)
    if pool is not None:
        negatives_pool = [i for i in dict.fromkeys(pool) if i != target and i not in interacted]
        if len(negatives_pool) < n - 1:
            raise ProtocolError(
                f"user {user_id!r}: the pre-generated pool has {len(negatives_pool)} usable "
                f"negatives, fewer than the {n - 1} asked for"
            )
        picks = rng.choice(len(negatives_pool), size=n - 1, replace=False)
        negatives = [negatives_pool[i] for i in sorted(picks)]
    else:
        negatives = _uniform_unseen(rng, catalog, interacted, target, n - 1, user_id)
    candidates = [target, *negatives]
    order = rng.permutation(len(candidates))
    return [candidates[i] for i in order]


def _uniform_unseen(
    rng: np.random.Generator,
    catalog: Sequence[str],
    interacted: Collection[str],
    target: str,
    count: int,
    user_id: str,
) -> list[str]:
    unseen = len(catalog) - len(set(interacted) | {target})
    if unseen < count:
        raise ProtocolError(f"user {user_id!r} has only {unseen} unseen items; cannot draw {count} negatives")
    chosen: dict[str, None] = {}
    # Rejection sampling keeps the draw uniform without materialising the unseen set.
    while len(chosen) < count:
        item = catalog[int(rng.integers(len(catalog)))]
        if item != target and item not in interacted and item not in chosen:
            chosen[item] = None
    return list(chosen)
