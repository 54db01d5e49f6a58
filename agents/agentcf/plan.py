"""Which interactions AgentCF's training replays, and against which sampled items.

- Users: the users under test (the paper trains and evaluates the same sampled users), the first
  `agentcf_train_users` of them in the run's order when that cap is set, then in id order.
- Interactions: each user's training history only (`UserCase.history`: the validation and test
  interactions are never replayed), its last `agentcf_interactions_per_user` items, oldest first.
- Steps: step t holds every trained user's t-th replayed interaction, like the paper's time-ordered
  batches; within a step the users are in id order.
- Negatives: one item per interaction, drawn with probability proportional to its training
  popularity (the authors' configuration samples by popularity) among the items the user has no
  training interaction with; seeded by (seed, user, position) only. Hidden interactions play no part:
  popularity counts training interactions, so an item only held-out data holds is never drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from state.agentcf.context import AgentCFContext
from world.data import natural_key
from world.environment import Environment
from world.errors import InvalidRecInput
from world.seeding import user_rng


@dataclass(frozen=True)
class Interaction:
    """One replayed training interaction."""

    user_id: str
    """The user."""
    position: int
    """Its position in the user's training history (0 = oldest)."""
    positive: str
    """The item the user really chose."""
    negative: str
    """The sampled item offered beside it."""
    positive_first: bool
    """Whether the user agent sees the real item first (a seeded coin: no position tells)."""


def training_items(env: Environment, user_id: str) -> list[str]:
    """The user's training interactions, oldest first (empty for a user outside the split)."""
    case = env.cases.get(user_id)
    return [e.item_id for e in case.history] if case else []


def trained_users(users: Sequence[str], ctx: AgentCFContext) -> list[str]:
    """The users training replays: the first `agentcf_train_users` (all when 0), in id order."""
    chosen = list(users)[: ctx.agentcf_train_users] if ctx.agentcf_train_users > 0 else list(users)
    return sorted(dict.fromkeys(chosen), key=natural_key)


def replayed_positions(env: Environment, user_id: str, ctx: AgentCFContext) -> list[int]:
    """Positions of the user's last `agentcf_interactions_per_user` training interactions (all when 0)."""
    count = len(training_items(env, user_id))
    cap = ctx.agentcf_interactions_per_user
    return list(range(max(0, count - cap) if cap > 0 else 0, count))


def _popularity(env: Environment) -> np.ndarray:
    return env.resource(
        "agentcf:popularity",
        lambda: np.array([float(env.popularity.get(i, 0)) for i in env.item_ids], dtype=np.float64),
    )


def interaction(env: Environment, user_id: str, position: int, seed: int) -> Interaction:
    """The replayed interaction at `position` of the user's training history, with its negative."""
    items = training_items(env, user_id)
    if not 0 <= position < len(items):
        raise InvalidRecInput(
            f"position {position} is outside user {user_id!r}'s training history ({len(items)} items)"
        )
    weights = _popularity(env).copy()
    seen = env.item_rows(items)
    weights[seen] = 0.0
    if weights.sum() <= 0:  # every item with training interactions is the user's: any other item
        weights = np.ones(len(env.item_ids))
        weights[seen] = 0.0
    if weights.sum() <= 0:
        raise InvalidRecInput(f"user {user_id!r} interacted with every item: no negative to sample")
    rng = user_rng(seed, user_id, f"agentcf-negative:{position}")
    negative = env.item_ids[int(rng.choice(len(weights), p=weights / weights.sum()))]
    return Interaction(user_id, position, items[position], negative, bool(rng.integers(2)))


def plan_steps(env: Environment, users: Sequence[str], ctx: AgentCFContext) -> list[list[Interaction]]:
    """The training plan: step t = every trained user's t-th replayed interaction (see the module
    docstring)."""
    per_user = {
        user: [interaction(env, user, p, ctx.seed) for p in replayed_positions(env, user, ctx)]
        for user in trained_users(users, ctx)
    }
    longest = max((len(v) for v in per_user.values()), default=0)
    return [[v[t] for v in per_user.values() if t < len(v)] for t in range(longest)]
