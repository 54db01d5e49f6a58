"""AgentCF's memories and their checkpoint file.

`Memories` holds what training changed: each trained user agent's current self-description (the
paper's short-term memory) and every self-description it wrote, oldest first (long-term memory), and
each touched item agent's current description. An agent training never touched keeps its initial
memory (agents/agentcf/memory.py), which is not stored.

The file is one JSON document, rewritten whole after every training step through a temporary file
(a killed run leaves the previous step's file, never half a file): `steps_done` says how many
steps it holds, so a rerun continues from there.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Memories:
    """The trained part of every agent's memory, and how far training got."""

    users: dict[str, str] = field(default_factory=dict)
    """User id -> the user agent's current self-description."""
    user_log: dict[str, list[str]] = field(default_factory=dict)
    """User id -> every self-description it held after an interaction, oldest first."""
    items: dict[str, str] = field(default_factory=dict)
    """Item id -> the item agent's current description."""
    steps_done: int = 0
    """Training steps applied (graphs/agentcf/training.py)."""
    usage: list[dict[str, Any]] = field(default_factory=list)
    """Usage records of every training call, in step order."""
    outcomes: dict[str, int] = field(default_factory=dict)
    """Counts: interactions, first-round right choices, reflections."""
    key: str = ""
    """The configuration digest the memories were trained under."""

    def fingerprint(self) -> str:
        """A digest of the memories (users, their logs, items) only: equal for equal memories."""
        text = json.dumps([self.users, self.user_log, self.items], sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def save(path: Path, memories: Memories) -> None:
    """Write `memories` to `path` atomically (a temporary file of this process, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(asdict(memories), ensure_ascii=False), encoding="utf-8")
    temporary.replace(path)


def load(path: Path) -> Memories:
    """The memories saved at `path` (a fresh, empty `Memories` when there is no file)."""
    if not path.is_file():
        return Memories()
    return Memories(**json.loads(path.read_text(encoding="utf-8")))


def read_only(path: str) -> Memories:
    """The memories at `path` for ranking, read once per process (an empty `Memories` for an empty
    path); blocking the first time (file I/O), a dictionary look-up afterwards (`loaded`)."""
    if not path:
        return Memories()
    with _lock:
        found = _read.get(path)
    if found is None:
        found = load(Path(path))
        with _lock:
            _read[path] = found
    return found


def loaded(path: str) -> bool:
    """True when `read_only(path)` answers without touching the disk."""
    with _lock:
        return not path or path in _read


def forget(path: str) -> None:
    """Drop `path` from the ranking cache (training just rewrote it)."""
    with _lock:
        _read.pop(path, None)


_read: dict[str, Memories] = {}
_lock = threading.Lock()
