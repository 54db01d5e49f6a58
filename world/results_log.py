"""results.jsonl: one line per (method, user), appended as each user finishes."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from world.errors import RecgraphError


class ResultsLog:
    """An append-only log that lets an interrupted run resume where it stopped."""

    def __init__(self, path: Path, protocol: dict[str, Any]) -> None:
        """Open `path`, dropping a half-written last line, and check it is the same protocol."""
        self.path = path
        self.protocol = protocol
        self._lock = threading.Lock()
        self.records: dict[str, dict[str, dict[str, Any]]] = {}
        if path.is_file():
            self._load()

    def _load(self) -> None:
        raw = self.path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]
        if len(complete) != len(raw):
            # A crash mid-write left a partial line: cut it so the next append starts clean.
            with self.path.open("r+b") as handle:
                handle.truncate(len(complete))
        for number, line in enumerate(complete.decode().splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise RecgraphError(f"{self.path}, line {number}: not valid JSON ({error})") from None
            if record.get("protocol") != self.protocol:
                raise RecgraphError(
                    f"{self.path} holds a run with another protocol ({record.get('protocol')}); "
                    "use a new --out or the same options"
                )
            self.records.setdefault(record["method"], {})[record["user_id"]] = record

    def done(self, method: str) -> dict[str, dict[str, Any]]:
        """Finished records of `method` by user id."""
        return self.records.get(method, {})

    def append(self, record: dict[str, Any]) -> None:
        """Write one finished user durably (flushed and fsynced) and remember it."""
        record = {**record, "protocol": self.protocol}
        line = json.dumps(record, sort_keys=True) + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            self.records.setdefault(record["method"], {})[record["user_id"]] = record
