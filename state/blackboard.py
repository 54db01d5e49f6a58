"""The shared blackboard: messages every agent posts, and their reducer."""

from __future__ import annotations

import time
import uuid

from typing_extensions import TypedDict


class BlackboardMessage(TypedDict):
    """One post on the blackboard (ARAG's message schema, shared by every method)."""

    id: str
    """Unique message id."""
    role: str
    """The agent (graph node) that wrote it."""
    content: str
    """What the agent concluded, in words."""
    score: float | None
    """An optional scalar the agent attaches (confidence, relevance, ...)."""
    timestamp: float
    """Seconds since the epoch when it was posted."""


def post(role: str, content: str, score: float | None = None) -> BlackboardMessage:
    """Make a blackboard message from `role`."""
    return BlackboardMessage(
        id=uuid.uuid4().hex, role=role, content=content, score=score, timestamp=time.time()
    )


def append_messages(
    left: list[BlackboardMessage] | None, right: list[BlackboardMessage] | None
) -> list[BlackboardMessage]:
    """Reducer: the blackboard only grows; posts from one superstep are appended in order."""
    return [*(left or []), *(right or [])]
