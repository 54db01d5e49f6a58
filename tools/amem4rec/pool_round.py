"""One round of AMEM4Rec pool writes, written once for both stores: the per-window commit
(compare-and-set or merge of rewrites, the new memory, the ledger row) and the re-embedding of the
memories a round rewrote. The contract is in `tools.amem4rec.pool`'s docstring."""

from __future__ import annotations

import json
import time
from typing import Any, Protocol

import numpy as np

from tools.amem4rec.record import Memory, decode_vector
from tools.memrec.writer import merge_memory
from world.vector_memo import embed_batch

MEMORY_COLUMNS = ", ".join(Memory.__dataclass_fields__)
"""The memory table's columns that make a `Memory`, in field order."""


class Session(Protocol):
    """One connection's statements, in either store. SQL is written once, for both: `?` marks
    parameters, `{memories}` `{history}` `{windows}` `{proposals}` name the tables and `{pool}` is
    the condition selecting this pool's rows; each store fills these in."""

    def fetch(self, sql: str, params: tuple | list = ()) -> list[dict[str, Any]]:
        """The rows of a query, as dicts in column order."""
        ...

    def execute(self, sql: str, params: tuple | list = ()) -> None:
        """Run a statement."""
        ...

    def insert(self, table: str, row: dict[str, Any]) -> None:
        """Add one row of this pool to `table` (memories, history, windows)."""
        ...


def marks(values: list[Any]) -> str:
    """`?, ?, ...`: one parameter mark per value (for `IN (...)`)."""
    return ",".join("?" * len(values))


def apply_window(session: Session, plan: dict[str, Any], memory_chars: int) -> dict[str, Any]:
    """One window's commit inside a round's transaction (see the module docstring)."""
    key, now = plan["window_key"], time.time()
    if session.fetch("SELECT 1 AS one FROM {windows} WHERE {pool} AND window_key = ?", (key,)):
        session.execute("DELETE FROM {proposals} WHERE {pool} AND window_key = ?", (key,))
        return {"status": "already applied", "evolved": [], "merged": [], "stored": None, "_changed": {}}
    texts, evolved, merged = {}, [], []
    rows = memories_of(session, [r["thought_id"] for r in plan.get("rewrites", [])])
    for rewrite in plan.get("rewrites", []):
        current = rows[rewrite["thought_id"]]
        behavior, pattern = rewrite["behavior_explanation"], rewrite["pattern_description"]
        kind, proposed = "evolved", None
        if current.version != rewrite["base_version"]:  # evolved by another window since it was read
            kind = "merged"
            proposed = json.dumps({"behavior_explanation": behavior, "pattern_description": pattern})
            behavior = merge_memory(current.behavior_explanation, behavior, memory_chars)
            pattern = merge_memory(current.pattern_description, pattern, memory_chars)
            merged.append(current.id)
        texts[current.id] = (current, behavior, pattern, kind, proposed)
        evolved.append(current.id)
    changed: dict[str, np.ndarray] = {}
    for current, behavior, pattern, kind, proposed in texts.values():
        version, count = current.version + 1, current.evolution_count + 1
        session.execute(  # the embedding follows once per round (`embed_rewritten`)
            "UPDATE {memories} SET behavior_explanation=?, pattern_description=?, evolution_count=?, "
            "version=?, updated_at=? WHERE {pool} AND id=?",
            (behavior, pattern, count, version, now, current.id),
        )
        _add_history(session, current.id, version, behavior, pattern, count, kind, key, proposed, now)
    stored = None
    if plan.get("store"):
        memory = plan["memory"]
        stored, vector = memory["id"], decode_vector(memory["embedding"])
        behavior, pattern = memory["behavior_explanation"], memory["pattern_description"]
        last = session.fetch("SELECT COALESCE(MAX(position), 0) AS position FROM {memories} WHERE {pool}")
        row = Memory(stored, behavior, pattern, 0, 1, plan["user_id"], key, now, now).as_dict()
        session.insert("memories", {**row, "embedding": vector, "position": last[0]["position"] + 1})
        _add_history(session, stored, 1, behavior, pattern, 0, "created", key, None, now)
        changed[stored] = vector
    session.insert(
        "windows",
        {
            "window_key": key,
            "action": plan["action"],
            "stored": stored,
            "linked": json.dumps(plan.get("linked", [])),
            "evolved": json.dumps(evolved),
            "merged": json.dumps(merged),
            "usage": json.dumps(plan.get("usage", [])),
            "applied_at": now,
        },
    )
    session.execute("DELETE FROM {proposals} WHERE {pool} AND window_key = ?", (key,))
    return {"status": "applied", "evolved": evolved, "merged": merged, "stored": stored, "_changed": changed}


def _add_history(session: Session, memory_id: str, version: int, *texts_and_more: Any) -> None:
    behavior, pattern, count, kind, key, proposed, now = texts_and_more
    session.insert(
        "history",
        {
            "memory_id": memory_id,
            "version": version,
            "behavior_explanation": behavior,
            "pattern_description": pattern,
            "evolution_count": count,
            "kind": kind,
            "window_key": key,
            "proposed": proposed,
            "at": now,
        },
    )


def embed_rewritten(session: Session, ids: list[str]) -> dict[str, np.ndarray]:
    """Embed the final texts of the memories a round rewrote (one batch) and store the vectors."""
    if not ids:
        return {}
    rows = memories_of(session, ids)
    vectors = embed_batch([rows[i].text() for i in ids])
    for memory_id, vector in zip(ids, vectors, strict=True):
        session.execute("UPDATE {memories} SET embedding=? WHERE {pool} AND id=?", (vector, memory_id))
    return dict(zip(ids, vectors, strict=True))


def memories_of(session: Session, ids: list[str]) -> dict[str, Memory]:
    """The memories of `ids` that exist, by id."""
    if not ids:
        return {}
    query = f"SELECT {MEMORY_COLUMNS} FROM {{memories}} WHERE {{pool}} AND id IN ({marks(ids)})"
    return {r["id"]: Memory(**r) for r in session.fetch(query, ids)}
