"""What an agent remembers: its trained memory when training touched it, else its initial one; and
the retrieval variant's look-up of past self-descriptions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agents.agentcf.memory import INITIAL_USER_MEMORY, initial_item_memory, item_terms, split_terms
from tools.agentcf.store import Memories
from world.environment import Environment


def user_memory(memories: Memories, user_id: str) -> str:
    """The user agent's current self-description."""
    return memories.users.get(user_id, INITIAL_USER_MEMORY)


def item_memories(env: Environment, memories: Memories, items: Iterable[str]) -> dict[str, str]:
    """Item id -> its agent's current description."""
    return {i: memories.items.get(i) or initial_item_memory(env.dataset.items[i]) for i in items}


def retrieve_past(
    env: Environment, memories: Memories, user_id: str, candidates: Sequence[str], count: int
) -> list[str]:
    """The `count` earlier self-descriptions of the user (not the current one) whose liked terms
    overlap the candidates' memories most, shown oldest first; ties go to the more recent. Term
    overlap stands in for the paper's embedding similarity (graphs/agentcf/FIDELITY.md)."""
    past = [m for m in memories.user_log.get(user_id, [])[:-1] if m != user_memory(memories, user_id)]
    if count <= 0 or not past:
        return []
    wanted: set[str] = set()
    for item, text in item_memories(env, memories, candidates).items():
        wanted.update(item_terms(env.dataset.items[item], text)[0])
    overlap = [len(set(split_terms(text)[0]) & wanted) for text in past]
    best = sorted(range(len(past)), key=lambda i: (-overlap[i], -i))[:count]
    return [past[i] for i in sorted(best)]
