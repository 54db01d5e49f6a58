"""MemRec Stage W (Eq. 5-6, Fig. 15): one LM_Mem ("mem" role) call per interaction (u, i_c) reads
the Stage R facets M_collab, the user's and the item's current memories and the curated neighbourhood
N'_k(u) of the interaction (with each neighbour's current memory), and returns the user's and the
item's updated memories and the rewritten memories of the neighbours the model chooses (as many as
it decides, at most `fanout`: `memrec_fanout_cap`, default 16 = the paper's k). O(1) LLM calls per
interaction, never one per neighbour.

The answer becomes a `PropagationJob` in which every memory is replaced as of the version it was
read at: the user's memory accumulates through the model's rewrite of its current text, and a
neighbour's memory is the model's rewrite, not an appended line. If a concurrent write moved a node
on since it was read, the text is merged instead, so nothing is lost (tools/memrec/jobs.py).

Fallback (deterministic memory edit, ours; used without an LLM or after a failed call; appends):
the user's memory gains 'Recently chose "<title>" (<categories>)', the item's memory the user's top
categories, and each of the first `fanout` offered neighbours one line naming the item; merged with
`merge_memory` (deduplicated, bounded length). The facets are not used by the fallback.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.feature_index import FeatureIndex
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
from state.memrec.state import FacetRecord
from tools.memrec.graph import item_node, user_node
from tools.memrec.writer import NodeUpdate, PropagationJob, merge_memory
from world.environment import Environment

MEMORY_CHARS = 600
"""Bound of a rewritten user or item memory (the writer's `max_chars`)."""
UPDATE_CHARS = 200
"""Bound of a neighbour update's rationale (its rewritten memory is bounded by `MEMORY_CHARS`)."""


def write_job_id(dataset: str, user_id: str, item_id: str, timestamp: float | None) -> str:
    """Deterministic id of the propagation job of one interaction (replays are applied once)."""
    key = f"{dataset}\x1f{user_id}\x1f{item_id}\x1f{timestamp if timestamp is not None else ''}"
    return "w-" + hashlib.sha256(key.encode()).hexdigest()[:24]


def write_json_schema(neighbour_ids: Sequence[str], fanout: int | None = None) -> dict[str, Any]:
    """`MemoryWrite` as a JSON schema: neighbour ids an enum of the offered ones, at most `fanout`
    updates (None: one per offered neighbour).

    Lengths are bounded by validation, not here: llama.cpp turns `maxLength` into a repetition
    grammar that makes constrained decoding of long strings very slow."""
    ids = list(neighbour_ids)
    text = {"minLength": 1}
    return constrained_schema(
        MemoryWrite,
        {
            "user_memory": text,
            "item_memory": text,
            "neighbor_updates": {"maxItems": len(ids) if fanout is None else min(len(ids), fanout)},
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
    fanout: int,
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
        for node in neighbours[:fanout]
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
        memory = cut_text(text, MEMORY_CHARS, collapse=True)
        rationale = cut_text(update.rationale.strip(), UPDATE_CHARS, collapse=True)
        return update.model_copy(update={"memory_update": memory, "rationale": rationale})

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


def facet_lines(facets: Sequence[FacetRecord]) -> str:
    """The Stage R facets as prompt lines, each quoted with its confidence ("(none)" without facets)."""
    lines = [f"- {quote(f['facet'])} [{float(f['confidence']):.2f}]" for f in facets]
    return "\n".join(lines) or "(none)"


def write_task(
    env: Environment,
    index: FeatureIndex,
    user_id: str,
    item_id: str,
    neighbours: list[str],
    memories: Mapping[str, tuple[str, int]],
    fanout: int,
    facets: Sequence[FacetRecord] = (),
) -> AgentTask[MemoryWrite]:
    """The Stage W agent task of one interaction: `neighbours` is N'_k of the interaction (best
    first; the clicked item is left out), `memories` holds (text, version) of the user, the item
    and those neighbours, `facets` are the Stage R facets M_collab; at most `fanout` neighbours are
    rewritten."""
    offered = [node for node in neighbours if node != item_node(item_id)]
    lines = [
        f"- {node} ({'item' if node.startswith('i:') else 'user'}): "
        + (quote(memories[node][0], MEMORY_CHARS) if node in memories else "(no memory)")
        for node in offered
    ]
    messages = prompts.WRITE.format_messages(
        user=user_node(user_id),
        item=item_node(item_id),
        facets=facet_lines(facets),
        user_memory=quote(memories[user_node(user_id)][0]),
        item_memory=quote(memories[item_node(item_id)][0]),
        n_neighbours=len(offered),
        neighbours="\n".join(lines) or "(none)",
        memory_chars=MEMORY_CHARS,
        fanout=min(fanout, len(offered)),
        update_chars=UPDATE_CHARS,
    )

    def validate(answer: MemoryWrite) -> tuple[MemoryWrite, list[str]]:
        return validate_write(answer, offered, fanout)

    def fallback() -> MemoryWrite:
        return fallback_write(env, index, user_id, item_id, offered, memories, fanout)

    schema = write_json_schema(offered, fanout)
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
    job_id: str,
    user_id: str,
    item_id: str,
    answer: MemoryWrite,
    memories: Mapping[str, tuple[str, int]],
    rewrite_neighbours: bool = True,
) -> PropagationJob:
    """The propagation job of a validated answer: user and item replaced as of the version read;
    neighbours replaced likewise (the model's rewrite), or merged (appended) when
    `rewrite_neighbours` is False (the fallback's one-line edits)."""
    user, item = user_node(user_id), item_node(item_id)

    def neighbour(update: NeighbourUpdate) -> NodeUpdate:
        if rewrite_neighbours:
            return NodeUpdate(
                update.neighbor_id, update.memory_update, "replace", memories[update.neighbor_id][1]
            )
        return NodeUpdate(update.neighbor_id, update.memory_update)

    updates = [
        NodeUpdate(user, answer.user_memory, "replace", memories[user][1]),
        NodeUpdate(item, answer.item_memory, "replace", memories[item][1]),
        *(neighbour(u) for u in answer.neighbor_updates),
    ]
    return PropagationJob(job_id, tuple(updates), MEMORY_CHARS)
