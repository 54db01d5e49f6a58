"""AMEM4Rec's shared extraction stage: each training window's extraction (memory creation, Eq. 2)
kept once for every pool whose extraction knobs agree, so the ablations — which differ only in the
later steps (validators, evolution) — never ask the extractor twice for one window.

Writers: `graphs.amem4rec.extraction.extract_windows` (the only one) adds a window's extraction —
the extract node's state update: the memory or the failed call, its trace line and usage — keyed
by its window and by a digest of exactly what the extractor was asked (prompt messages, the mem
backend, the field bound), so a window asked differently is another row. Readers: the training
graph's extract node (`graphs.amem4rec.train_graph.prepare_extract`).

Where: a folder holding `stage.json` (what the stage is keyed by, written atomically: temp file +
`os.replace`), `extractions.sqlite` (one row per extraction, WAL, inserted with INSERT OR IGNORE
so a row is written whole once and never replaced) and `extractions.lock`. Two processes building
the same stage at once (two ablations' prepare hooks) take turns on an exclusive `fcntl.flock` of
the lock file: the second waits, then finds the first's rows and asks nothing.
"""

from __future__ import annotations

import fcntl
import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

DATABASE = "extractions.sqlite"
LOCK = "extractions.lock"
KEY_FILE = "stage.json"
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS extractions (window_key TEXT NOT NULL, request TEXT NOT NULL, "
    "outcome TEXT NOT NULL, PRIMARY KEY (window_key, request))"
)


class ExtractionStage:
    """One stage folder, opened (created when missing)."""

    def __init__(self, folder: Path, key: dict[str, Any]) -> None:
        """Open the stage at `folder`, recording `key` (what its rows depend on) in `stage.json`."""
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / KEY_FILE).is_file():
            temporary = folder / f"{KEY_FILE}.{os.getpid()}.tmp"
            temporary.write_text(json.dumps(key, indent=2, sort_keys=True) + "\n")
            os.replace(temporary, folder / KEY_FILE)
        self._lock = threading.Lock()
        database = folder / DATABASE
        self._db = sqlite3.connect(database, check_same_thread=False, isolation_level=None, timeout=60)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(SCHEMA)

    def close(self) -> None:
        """Close the database connection."""
        with self._lock:
            self._db.close()

    def get(self, window_key: str, request: str) -> dict[str, Any] | None:
        """The stored extraction of a window asked as `request` (a digest), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT outcome FROM extractions WHERE window_key = ? AND request = ?", (window_key, request)
            ).fetchone()
        return json.loads(row[0]) if row else None

    def stored(self) -> set[tuple[str, str]]:
        """(window key, request digest) of every stored extraction."""
        with self._lock:
            return {(k, r) for k, r in self._db.execute("SELECT window_key, request FROM extractions")}

    def put(self, window_key: str, request: str, outcome: dict[str, Any]) -> dict[str, Any]:
        """Store an extraction unless one is there already; returns the stored one (the first
        writer's), which every pool then uses."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO extractions VALUES (?, ?, ?)",
                (window_key, request, json.dumps(outcome, sort_keys=True)),
            )
        found = self.get(window_key, request)
        assert found is not None
        return found

    @contextmanager
    def building(self) -> Iterator[None]:
        """Hold the stage's exclusive file lock (other processes building it wait here)."""
        with open(self.folder / LOCK, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


_active: dict[str, ExtractionStage] = {}
_active_lock = threading.Lock()


def attach(pool_location: str, stage: ExtractionStage | None) -> None:
    """Make `stage` the one the extract node reads for windows trained into the pool at
    `pool_location` in this process (None: none; the extractor is asked)."""
    with _active_lock:
        if stage is None:
            _active.pop(pool_location, None)
        else:
            _active[pool_location] = stage


def attached(pool_location: str) -> ExtractionStage | None:
    """The stage attached to a pool in this process, if any."""
    with _active_lock:
        return _active.get(pool_location)
