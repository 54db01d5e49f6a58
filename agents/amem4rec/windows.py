"""Training windows: w consecutive items of a user's TRAINING history only (never the validation or
test interaction), their keys and the ids of the memories they create, and the training plan.

The plan: users in id order; per user the sliding windows (stride 1) over the training history,
at most `per_user` of them, the most recent ones (0: all), processed oldest first.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from world.data import natural_key
from world.environment import Environment
from world.errors import InvalidRecInput

_SAFE = re.compile(r"^[A-Za-z0-9_.-]+$")


@dataclass(frozen=True)
class WindowRef:
    """One window of the plan."""

    user_id: str
    """The user."""
    start: int
    """Position of its first item in the user's training history."""

    @property
    def key(self) -> str:
        """The window's ledger key."""
        return window_key(self.user_id, self.start)


def window_key(user_id: str, start: int) -> str:
    """`<user>:<start>`: a window's id in the pool's ledger."""
    return f"{user_id}:{start}"


def memory_id(user_id: str, start: int) -> str:
    """The id of the memory a window creates (stable, so a replay never makes a second one)."""
    user = user_id if _SAFE.match(user_id) else hashlib.sha256(user_id.encode()).hexdigest()[:10]
    return f"m-{user}-{start}"


def training_items(env: Environment, user_id: str) -> list[str]:
    """The user's training history, oldest first (validation and test interactions excluded)."""
    env.require_user(user_id)
    case = env.cases.get(user_id)
    return [e.item_id for e in case.history] if case is not None else []


def window_items(env: Environment, user_id: str, start: int, w: int) -> list[str]:
    """The window's items; `InvalidRecInput` naming the problem when it does not fit the history."""
    if w < 1:
        raise InvalidRecInput(f"amem4rec_window must be at least 1, got {w}")
    items = training_items(env, user_id)
    if len(items) < w:
        raise InvalidRecInput(
            f"user {user_id!r} has {len(items)} training items, fewer than one window of {w}"
        )
    if not 0 <= start <= len(items) - w:
        raise InvalidRecInput(
            f"window start {start} is outside user {user_id!r}'s training history "
            f"({len(items)} items: windows of {w} start at 0..{len(items) - w})"
        )
    return items[start : start + w]


def user_windows(env: Environment, user_id: str, w: int, per_user: int) -> list[WindowRef]:
    """The user's windows in the plan: the most recent `per_user` (0: all), oldest first."""
    count = len(training_items(env, user_id)) - w + 1
    starts = list(range(max(count, 0)))
    if per_user > 0:
        starts = starts[-per_user:]
    return [WindowRef(user_id, start) for start in starts]


def plan_windows(env: Environment, users: Iterable[str], w: int, per_user: int) -> list[WindowRef]:
    """Every training window of `users` (in id order) in processing order."""
    return [
        ref for user in sorted(set(users), key=natural_key) for ref in user_windows(env, user, w, per_user)
    ]
