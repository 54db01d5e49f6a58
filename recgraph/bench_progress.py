"""The progress rows of one `recgraph bench` run, live on a terminal and as plain lines elsewhere.

A row is a method's users (one per method, added when its ranking starts) or a piece of one-time
work (item vectors, an index, a prepare hook's phase such as "memrec · Stage W" or
"chainrec_learned · sft"), added when its first report arrives. The rows are the tasks of a rich
`Progress`: on a terminal it is shown live, as always; anywhere else it stays hidden (it would
print nothing until the run ended) and a `ProgressLog` writes plain lines instead.

Every row ends: a method's when its last user is ranked, a phase's when it reaches its total or its
work is over short of it (`end`: the bench runner says so), after which the row is complete (its
total becomes what it did) and a later report of the same label starts a new row. When the run
stops early, `close` removes the rows still open, so no bar is left with a stale ETA.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from rich.progress import Progress, TaskID

from recgraph.progress_log import ProgressLog
from world.progress import OPEN, complete

USERS = "users"
"""The unit of a method's row."""


class BenchProgress:
    """The run's rows (see the module docstring); its methods are the bench runner's callbacks."""

    def __init__(
        self, progress: Progress, users: int, resumed: Mapping[str, int], log: ProgressLog | None = None
    ) -> None:
        """Rows in `progress`; each method ranks `users`, `resumed[method]` of them logged before;
        plain lines go to `log` when given."""
        self.progress, self.users, self.resumed, self.log = progress, users, resumed, log
        self._open: dict[str, TaskID] = {}
        self._lock = threading.Lock()

    def advance(self, method: str, count: int) -> None:
        """`method` has ranked `count` users in this run (the first call, with 0, adds its row)."""
        done = self.resumed.get(method, 0) + count
        self._report(method, done, self.users, USERS)

    def phase(self, label: str, done: int, total: int) -> None:
        """One-time work `label` has done `done` of `total` (the first report adds its row)."""
        self._report(label, done, total, "")

    def end(self, label: str) -> None:
        """`label`'s work is over, short of its total or not: its row is complete."""
        with self._lock:
            task = self._open.pop(label, None)
            if task is None:
                return
            done = next(t for t in self.progress.tasks if t.id == task).completed
            self.progress.update(task, total=done)
            if self.log:
                self.log.end(label)

    def close(self) -> None:
        """The run is over: rows still open (a crash, an interrupt) are removed."""
        with self._lock:
            for label, task in list(self._open.items()):
                self.progress.remove_task(task)
                if self.log:
                    self.log.stop(label)
            self._open.clear()

    def _report(self, label: str, done: int, total: int, unit: str) -> None:
        bar_total = None if total == OPEN else total  # an open row's bar has no end until `end`
        with self._lock:
            task = self._open.get(label)
            if task is None:  # its clock starts now: each row shows its own elapsed time
                task = self._open[label] = self.progress.add_task(label, total=bar_total, completed=done)
                if self.log:
                    self.log.start(label, done, total, unit)
            else:
                self.progress.update(task, completed=done, total=bar_total)
                if self.log:
                    self.log.update(label, done, total)
            if complete(done, total):
                del self._open[label]
                if self.log:
                    self.log.end(label)


@contextmanager
def bench_progress(
    progress: Progress, users: int, resumed: Mapping[str, int], log: ProgressLog | None = None
) -> Iterator[BenchProgress]:
    """The run's `BenchProgress`: `progress` shown live unless `log` is given (then its heartbeat
    runs instead); rows still open at the end are removed before the last frame is drawn."""
    rows = BenchProgress(progress, users, resumed, log)
    with log.heartbeat() if log else progress:
        try:
            yield rows
        finally:
            rows.close()
