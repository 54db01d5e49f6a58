"""Stage W's unit of work: a propagation job (node updates from one interaction) and the pure merge
it applies. Stores and the writer share these; `tools.memrec.writer` re-exports them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Literal

_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")


def _phrases(text: str) -> list[str]:
    return [p.strip() for p in _SPLIT.split(text) if p.strip()]


def _key(phrase: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", phrase.lower()).split())


def merge_memory(old: str, addition: str, max_chars: int = 600) -> str:
    """Append `addition`'s new phrases to `old` (case/punctuation-insensitive dedupe), bounded length.

    The first phrase (the node's anchor: a title or profile head) is kept; when the text is too
    long the oldest phrases after it go first; a last resort truncates with an ellipsis.
    """
    phrases: list[str] = []
    seen: set[str] = set()
    for phrase in _phrases(old) + _phrases(addition):
        key = _key(phrase)
        if key and key not in seen:
            seen.add(key)
            phrases.append(phrase if phrase[-1] in ".!?;…" else phrase + ".")
    length = sum(map(len, phrases)) + max(len(phrases) - 1, 0)
    while len(phrases) > 2 and length > max_chars:
        length -= len(phrases.pop(1)) + 1
    text = " ".join(phrases)
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


@dataclass(frozen=True)
class NodeUpdate:
    """One node's share of a propagation job."""

    node_id: str
    """Target node ("u:<user>" or "i:<item>")."""
    text: str
    """Text to merge in (mode 'merge') or the new memory (mode 'replace')."""
    mode: Literal["merge", "replace"] = "merge"
    """'merge' appends via `merge_memory`; 'replace' rewrites the memory."""
    based_on_version: int | None = None
    """For 'replace': the version the text was written from; if the node moved on since, the text
    is merged instead, so the concurrent update is not lost."""


@dataclass(frozen=True)
class PropagationJob:
    """A batch of node updates from one interaction, applied atomically."""

    job_id: str
    """Unique id; resubmitting the same id is a no-op (at-least-once delivery, applied once)."""
    updates: tuple[NodeUpdate, ...]
    """The node updates (a node may appear more than once; they apply in order)."""
    max_chars: int = 600
    """Length bound of each resulting memory."""

    def node_ids(self) -> list[str]:
        """Distinct nodes the job touches, in first-mention order."""
        return list(dict.fromkeys(u.node_id for u in self.updates))

    def compute(self, current: Mapping[str, tuple[str, int]]) -> dict[str, str]:
        """Pure step: new text per node from `{node_id: (text, version)}`; KeyError for a missing node."""
        texts = {node: current[node][0] for node in self.node_ids()}
        for u in self.updates:
            stale = u.based_on_version is not None and u.based_on_version != current[u.node_id][1]
            if u.mode == "replace" and not stale:
                texts[u.node_id] = merge_memory("", u.text, self.max_chars)
            else:
                texts[u.node_id] = merge_memory(texts[u.node_id], u.text, self.max_chars)
        return texts

    def to_json(self) -> str:
        """Serialised form stored in the queue."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, payload: str) -> PropagationJob:
        """Inverse of `to_json`."""
        data = json.loads(payload)
        updates = tuple(NodeUpdate(**u) for u in data.pop("updates"))
        return cls(updates=updates, **data)


Outcome = Literal["applied", "skipped", "conflict"]
"""What one attempt at a job did: committed it, found it no longer pending, or hit a version conflict."""


class VersionConflict(Exception):
    """A node moved on since the job read it: its transaction is rolled back and the job recomputed.

    An exception of ours, not the driver's rollback signal: when the connection breaks during the
    rollback (a database restart), the driver re-raises the exception that caused it, and this one
    still reads as a conflict (retried), never as a failed job."""
