"""results.jsonl: one line per (method, user), appended as each user finishes."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from world.errors import RecgraphError


class ResultsLog:
    """An append-only log that lets an interrupted run resume where it stopped."""

    def __init__(
        self,
        path: Path,
        protocol: dict[str, Any],
        *,
        remember: bool = True,
        compact: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        """Open `path`, dropping a half-written last line, and check it is the same protocol.

        `remember=False` is for a writer that does not read its own records back (ChainRec's
        trajectories, about 1 MB of Python objects per row): `done` holds what the file held when
        opened, and `append` writes without keeping. `compact` rewrites each record read from the
        file once its protocol is checked (a reader of many large records shares their repeated
        strings; a writer that only counts them keeps the counts)."""
        self.path = path
        self.protocol = protocol
        self.remember = remember
        self.compact = compact
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
        # Lines of the bytes as they are (a decoded copy of a 60 MB trajectory file would be held,
        # at four bytes a character in a StringIO, while the records pile up).
        for number, line in enumerate(io.BytesIO(complete), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise RecgraphError(f"{self.path}, line {number}: not valid JSON ({error})") from None
            if record.get("protocol") != self.protocol:
                raise RecgraphError(
                    f"{self.path} holds a run with another protocol ({record.get('protocol')}); "
                    "use a new --out or the same options"
                )
            if self.compact is not None:
                record = self.compact(record)
            self.records.setdefault(record["method"], {})[record["user_id"]] = record

    def done(self, method: str) -> dict[str, dict[str, Any]]:
        """Finished records of `method` by user id (with `remember=False`, those the file held
        when the log was opened)."""
        return self.records.get(method, {})

    def append(self, record: dict[str, Any]) -> None:
        """Write one finished user durably (flushed and fsynced) and remember it (unless the log
        was opened with `remember=False`)."""
        record = {**record, "protocol": self.protocol}
        line = json.dumps(record, sort_keys=True) + "\n"
        with self._lock:
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line)
                handle.flush()
                os.fsync(handle.fileno())
            if self.remember:
                self.records.setdefault(record["method"], {})[record["user_id"]] = record
