"""MemRec Stage W: one LM_Mem ("mem" role) call per interaction rewrites the user's and the item's
memories and proposes short updates for at most `fanout_cap` curated neighbours.

The neighbours offered are the interaction's curated neighbourhood: the user's 1- and 2-hop
neighbours scored by the domain rules with the interacted item as the only candidate, top
`fanout_cap` (so O(1) LLM calls per interaction, never one per neighbour). The answer becomes a
`PropagationJob`: user and item memories are replaced as of the version they were read at (if a
concurrent write moved the node on, the text is merged instead, so nothing is lost), neighbour
updates are merged in.

Fallback (deterministic memory edit): the user's memory gains 'Recently chose "<title>"
(<categories>)', the item's memory gains the user's top categories, every offered neighbour gains
one line naming the item; merged with `merge_memory` (deduplicated, bounded length).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.features import FeatureIndex
from agents.validation import (
    DUPLICATE_NEIGHBOUR,
    EMPTY_ANSWER,
    EMPTY_UPDATE,
    FANOUT_CUT,
    MEMORY_CUT,
    UNKNOWN_NEIGHBOUR,
    constrained_schema,
    cut_text,
    keep_known_unique,
)
from prompts import memrec as prompts
from prompts.common import quote
from state.memrec.schemas import MemoryWrite, NeighbourUpdate
from tools.memrec.graph import item_node, user_node
from tools.memrec.writer import NodeUpdate, PropagationJob, merge_memory
from world.environment import Environment

MEMORY_CHARS = 600
"""Bound of a rewritten user or item memory (the writer's `max_chars`)."""
UPDATE_CHARS = 200
"""Bound of one neighbour's memory update and of its rationale."""
NEIGHBOUR_NOTE_CHARS = 160
"""Neighbour memories are cut to this many characters in the prompt."""


def write_job_id(dataset: str, user_id: str, item_id: str, timestamp: float | None) -> str:
    """Deterministic id of the propagation job of one interaction (replays are applied once)."""
    key = f"{dataset}\x1f{user_id}\x1f{item_id}\x1f{timestamp if timestamp is not None else ''}"
    return "w-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def write_json_schema(neighbour_ids: Sequence[str]) -> dict[str, Any]:
    """`MemoryWrite` as a JSON schema: neighbour ids an enum of the offered ones.

    Lengths are bounded by validation, not here: llama.cpp turns `maxLength` into a repetition
    grammar that makes constrained decoding of long strings very slow."""
    ids = list(neighbour_ids)
    text = {"minLength": 1}
    return constrained_schema(
        MemoryWrite,
        {
            "user_memory": text,
            "item_memory": text,
            "neighbor_updates": {"maxItems": len(ids)},
            "neighbor_updates[].neighbor_id": {"enum": ids} if ids else {},
            "neighbor_updates[].memory_update": text,
        },
    )


def top_categories(index: FeatureIndex, user_id: str, count: int = 2) -> list[str]:
    """The user's most frequent training categories (empty when the dataset has none)."""
    row = index.user_dist[index.env.user_index[user_id]]
    order = np.argsort(-row, kind="stable")[:count]
    return [index.categories[j] for j in order if row[j] > 0]


def fallback_write(
    env: Environment,
    index: FeatureIndex,
    user_id: str,
    item_id: str,
    neighbours: list[str],
    memories: Mapping[str, tuple[str, int]],
) -> MemoryWrite:
    """The deterministic memory edit used without an LLM (see the module docstring)."""
    item = env.dataset.items[item_id]
    cats = ", ".join(item.categories[:3])
    chose = f'Recently chose "{item.title}"' + (f" ({cats})." if cats else ".")
    tastes = top_categories(index, user_id)
    fan = f"Chosen by a fan of {' and '.join(tastes)}." if tastes else f"Chosen by user {user_id}."
    updates = [
        NeighbourUpdate(
            neighbor_id=node,
            memory_update=(
                f'A like-minded user recently chose "{item.title}".'
                if node.startswith("u:")
                else f'Often chosen alongside "{item.title}".'
            ),
            rationale="curated neighbour of the interaction",
        )
        for node in neighbours
    ]
    return MemoryWrite(
        user_memory=merge_memory(memories[user_node(user_id)][0], chose, MEMORY_CHARS),
        item_memory=merge_memory(memories[item_node(item_id)][0], fan, MEMORY_CHARS),
        neighbor_updates=updates,
    )


def validate_write(answer: MemoryWrite, offered: list[str], fanout: int) -> tuple[MemoryWrite, list[str]]:
    """Keep updates of offered neighbours only (first per id, at most `fanout`), bound every text."""
    user_text, item_text = answer.user_memory.strip(), answer.item_memory.strip()
    if not user_text or not item_text:
        raise InvalidAnswer("user_memory and item_memory must both be non-empty", EMPTY_ANSWER)
    repairs: list[str] = []

    def bounded(_: str, update: NeighbourUpdate) -> NeighbourUpdate | None:
        if not (text := update.memory_update.strip()):
            repairs.append(EMPTY_UPDATE)
            return None
        return update.model_copy(update={"memory_update": cut_text(text, UPDATE_CHARS, collapse=True)})

    by_id, dropped = keep_known_unique(
        answer.neighbor_updates,
        set(offered),
        key=lambda u: u.neighbor_id,
        keep=bounded,
        unknown=UNKNOWN_NEIGHBOUR,
        duplicate=DUPLICATE_NEIGHBOUR,
    )
    repairs += dropped
    kept = list(by_id.values())
    if len(kept) > fanout:
        repairs.append(FANOUT_CUT)
        kept = kept[:fanout]
    if len(user_text) > MEMORY_CHARS or len(item_text) > MEMORY_CHARS:
        repairs.append(MEMORY_CUT)
    fixed = MemoryWrite(
        user_memory=cut_text(user_text, MEMORY_CHARS, collapse=True),
        item_memory=cut_text(item_text, MEMORY_CHARS, collapse=True),
        neighbor_updates=kept,
    )
    return fixed, repairs


def write_task(
    env: Environment,
    index: FeatureIndex,
    user_id: str,
    item_id: str,
    neighbours: list[str],
    memories: Mapping[str, tuple[str, int]],
    fanout: int,
) -> AgentTask[MemoryWrite]:
    """The Stage W agent task of one interaction: `neighbours` are the curated neighbours (best
    first), `memories` holds (text, version) of the user, the item and those neighbours."""
    offered = [node for node in neighbours if node != item_node(item_id)][:fanout]
    lines = [
        f"- {node} ({'item' if node.startswith('i:') else 'user'}): "
        + (quote(memories[node][0], NEIGHBOUR_NOTE_CHARS) if node in memories else "(no memory)")
        for node in offered
    ]
    messages = prompts.WRITE.format_messages(
        user=user_node(user_id),
        item=item_node(item_id),
        user_memory=quote(memories[user_node(user_id)][0]),
        item_memory=quote(memories[item_node(item_id)][0]),
        neighbours="\n".join(lines) or "(none)",
        memory_chars=MEMORY_CHARS,
        fanout=min(fanout, len(offered)),
        update_chars=UPDATE_CHARS,
    )

    def validate(answer: MemoryWrite) -> tuple[MemoryWrite, list[str]]:
        return validate_write(answer, offered, fanout)

    def fallback() -> MemoryWrite:
        return fallback_write(env, index, user_id, item_id, offered, memories)

    schema = write_json_schema(offered)
    return AgentTask(
        agent="propagate",
        role="mem",
        messages=messages,
        schema=MemoryWrite,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    )


def write_job(
    job_id: str, user_id: str, item_id: str, answer: MemoryWrite, memories: Mapping[str, tuple[str, int]]
) -> PropagationJob:
    """The propagation job of a validated answer (user/item replaced as of the version read)."""
    user, item = user_node(user_id), item_node(item_id)
    updates = [
        NodeUpdate(user, answer.user_memory, "replace", memories[user][1]),
        NodeUpdate(item, answer.item_memory, "replace", memories[item][1]),
        *(NodeUpdate(u.neighbor_id, u.memory_update) for u in answer.neighbor_updates),
    ]
    return PropagationJob(job_id, tuple(updates), MEMORY_CHARS)
