"""Progress as plain lines, for a run nobody watches live (`nohup`, CI, a log file, a pipe).

A live bar redraws itself; in a file it shows nothing until the run ends. Instead, each row (a
method's users, a piece of one-time work) gets one line when it starts, a line every `interval`
seconds or every `step` of its total (whichever comes first) with done/total, rate and ETA, and a
line when it ends:

    itemknn: started, 0/100 users
    itemknn: 10/100 users (10%), 0:00:04 elapsed, 2.5 users/s, ETA 0:00:36
    itemknn: finished, 100/100 users in 0:00:40 (2.5 users/s)
    item vectors: finished, 863/1,682 in 0:00:21 (41/s)

The rate counts only this run's work (not what a resumed run found done). `tick()` writes the
lines of rows that went quiet for `interval` seconds (a slow LLM call); `heartbeat()` calls it
from a thread. The clock is injectable, so the timing rules are tested without waiting.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from world.progress import OPEN, complete

INTERVAL_SECONDS = 30.0
"""At most this long between two lines of a row that is still working."""
STEPS = 10
"""A line each time a row passes another 1/STEPS of its total (every 10%)."""
HEARTBEAT_SECONDS = 1.0
"""How often `heartbeat()`'s thread looks for rows that went quiet."""


@dataclass
class _Row:
    """What the log knows of one row."""

    total: int
    done: int
    unit: str
    started: float
    first_done: int
    """Done when the row started (a resumed run's earlier work): not part of its rate."""
    last_line: float
    last_step: int


def clock_text(seconds: float) -> str:
    """`seconds` as H:MM:SS."""
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"


def rate_text(rate: float, unit: str) -> str:
    """A rate with the digits that matter: "2.5 users/s", "41/s", "0.0061 users/s"."""
    shown = f"{rate:,.0f}" if rate >= 100 else f"{rate:.1f}" if rate >= 1 else f"{rate:.2g}"
    return f"{shown} {unit}/s" if unit else f"{shown}/s"


class ProgressLog:
    """Plain progress lines through `write` (see the module docstring); thread-safe."""

    def __init__(
        self,
        write: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        interval: float = INTERVAL_SECONDS,
        steps: int = STEPS,
    ) -> None:
        """Write lines with `write`, timed by `clock` (seconds), every `interval` s or 1/`steps`."""
        self.write, self.clock, self.interval, self.steps = write, clock, interval, steps
        self._rows: dict[str, _Row] = {}
        self._lock = threading.Lock()

    def start(self, label: str, done: int, total: int, unit: str = "") -> None:
        """A row starts with `done` of `total` already done ("started" line)."""
        now = self.clock()
        with self._lock:
            row = _Row(total, done, unit, now, done, now, self._step(done, total))
            self._rows[label] = row
            self.write(f"{label}: started, {self._count(row)}")

    def update(self, label: str, done: int, total: int) -> None:
        """`label` has done `done` of `total`: a line when `interval` passed or a step was crossed."""
        with self._lock:
            row = self._rows.get(label)
            if row is None:
                return
            row.done, row.total = done, total
            step = self._step(done, total)
            due = step > row.last_step or self.clock() - row.last_line >= self.interval
            if not complete(done, total) and due:
                row.last_step = max(row.last_step, step)
                self._progress_line(label, row)

    def end(self, label: str) -> None:
        """`label`'s work is over, at its total or short of it ("finished" line)."""
        with self._lock:
            row = self._rows.pop(label, None)
            if row is None:
                return
            row.total = row.done if row.total == OPEN else row.total  # on demand: it did all it was asked
            elapsed = self.clock() - row.started
            rate = (row.done - row.first_done) / elapsed if elapsed > 0 else 0.0
            speed = f" ({rate_text(rate, row.unit)})" if rate > 0 else ""
            self.write(f"{label}: finished, {self._count(row)} in {clock_text(elapsed)}{speed}")

    def stop(self, label: str) -> None:
        """The run ended before `label`'s work did (a crash, an interrupt): "stopped" line."""
        with self._lock:
            row = self._rows.pop(label, None)
            if row is not None:
                elapsed = clock_text(self.clock() - row.started)
                self.write(f"{label}: stopped at {self._count(row)} after {elapsed}")

    def tick(self) -> None:
        """A line for every row that has written nothing for `interval` seconds."""
        with self._lock:
            now = self.clock()
            for label, row in self._rows.items():
                if now - row.last_line >= self.interval:
                    self._progress_line(label, row)

    def open_rows(self) -> list[str]:
        """Rows started and not yet finished or stopped, in start order."""
        with self._lock:
            return list(self._rows)

    @contextmanager
    def heartbeat(self, every: float = HEARTBEAT_SECONDS) -> Iterator[None]:
        """Call `tick()` every `every` seconds from a daemon thread for the duration of the block."""
        stopped = threading.Event()

        def beat() -> None:
            while not stopped.wait(every):
                self.tick()

        thread = threading.Thread(target=beat, name="progress-log", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stopped.set()
            thread.join()

    def _step(self, done: int, total: int) -> int:
        return 0 if total == OPEN else self.steps if total <= 0 else done * self.steps // total

    def _count(self, row: _Row) -> str:
        unit = f" {row.unit}" if row.unit else ""
        total = "" if row.total == OPEN else f"/{row.total:,}"
        return f"{row.done:,}{total}{unit}"

    def _progress_line(self, label: str, row: _Row) -> None:
        now = self.clock()
        row.last_line = now
        elapsed = now - row.started
        if row.total == OPEN:  # on demand: no percentage, no ETA
            line = f"{label}: {self._count(row)} so far, {clock_text(elapsed)} elapsed"
            rate = (row.done - row.first_done) / elapsed if elapsed > 0 else 0.0
            self.write(f"{line}, {rate_text(rate, row.unit)}" if rate > 0 else line)
            return
        percent = 100 if row.total <= 0 else row.done * 100 // row.total
        line = f"{label}: {self._count(row)} ({percent}%), {clock_text(elapsed)} elapsed"
        new = row.done - row.first_done
        if new <= 0 or elapsed <= 0:
            self.write(f"{line}, ETA unknown (nothing finished yet)")
            return
        rate = new / elapsed
        eta = clock_text(max(0, row.total - row.done) / rate)
        self.write(f"{line}, {rate_text(rate, row.unit)}, ETA {eta}")
