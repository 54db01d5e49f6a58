"""Progress of one-time per-dataset work (embedding the catalog, building indexes) for whoever watches.

World- and tool-level code cannot see the harness, so it reports here: `report(label, done, total)`
goes to the callback installed by `reporting(...)` (the bench installs its progress display's phase
rows), and nowhere when nobody watches. Work that can stop short of its total (item vectors embed
only the rows a run reads) says so with `end(label)`, so no row is left waiting for the rest. Each
label's bouts (from its first report, or one after it ended or reached its total, to its `end`, its
total or its latest report) are kept, so a run can say how long each piece of one-time work took
(`PhaseClock.seconds`: the sum of its bouts, not the time from its first report to its last, which
holds whatever ran between bouts). Work that reports only after each batch, between other work
(user-memory vectors read as rankings ask for them), times its batches itself and says so
(`report(..., worked=seconds)`): such a label's seconds are the sum of those.

`OpenPhases` is for whoever runs work in stages (the bench: a method's prepare, then its ranking):
it remembers the labels a stage opened and ends those still open when the stage is over.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reporter = Callable[[str, int, int], None]
"""Called as (label, done so far, total). A reporter that also has an `end(label)` method is told
when a label's work is over (`end`)."""
Ender = Callable[[str], None]
"""Called with a label whose work is over, whether or not it reached its total."""

_lock = threading.Lock()
_reporters: list[Reporter] = []
OPEN = -1
"""The total of work done on demand (rows read as rankings ask for them), whose size is known only
when it is over: the row stays open until its stage ends it, and its total is then what it did."""


def complete(done: int, total: int) -> bool:
    """True when a report says its work reached its total (never for an `OPEN` total)."""
    return total != OPEN and done >= total


class PhaseClock:
    """A reporter remembering, per label, its bouts of work and the seconds its work said it took."""

    def __init__(self) -> None:
        """No phase seen yet."""
        self._bouts: dict[str, list[list[float]]] = {}
        self._closed: set[str] = set()
        self._worked: dict[str, list[tuple[float, float]]] = {}

    def __call__(self, label: str, done: int, total: int, worked: float | None = None) -> None:
        """Note a report of `label` (`worked`: the seconds of work it covers, timed by the work)."""
        now = time.perf_counter()
        bouts = self._bouts.setdefault(label, [])
        if not bouts or label in self._closed:
            bouts.append([now, now])
            self._closed.discard(label)
        bouts[-1][1] = now
        if complete(done, total):  # a later report is new work (a second world's index)
            self._closed.add(label)
        if worked is not None:
            self._worked.setdefault(label, []).append((now, worked))

    def end(self, label: str) -> None:
        """Note that `label`'s work is over (its bout ends now, if it was reported)."""
        if label in self._bouts and label not in self._closed:
            self._bouts[label][-1][1] = time.perf_counter()
            self._closed.add(label)

    def seconds(self, since: float | None = None) -> dict[str, float]:
        """Seconds each label's work took, in first-seen order: the sum of its `worked` seconds when
        it reported them, else of its bouts' spans; with `since` (a `time.perf_counter()` value),
        only what was reported after it, for the labels reported after it."""
        after = float("-inf") if since is None else since
        out: dict[str, float] = {}
        for label, bouts in self._bouts.items():
            if bouts[-1][1] <= after:
                continue
            if label in self._worked:
                out[label] = sum(seconds for at, seconds in self._worked[label] if at > after)
            else:
                out[label] = sum(end - max(start, after) for start, end in bouts if end > after)
        return out


_process_clock = PhaseClock()


def clocked(forward: Reporter | None) -> tuple[Reporter, PhaseClock]:
    """A reporter passing reports on to `forward` (when given) and the `PhaseClock` it times them on:
    a stage's own phases (a prepare hook's) are timed whether or not anyone watches."""
    clock = PhaseClock()

    def report_and_time(label: str, done: int, total: int) -> None:
        clock(label, done, total)
        if forward is not None:
            forward(label, done, total)

    return report_and_time, clock


def phase_seconds(since: float | None = None) -> dict[str, float]:
    """Every label reported in this process (after `since`, a `time.perf_counter()` value, when
    given), with the seconds its work took (after `since`)."""
    with _lock:
        return _process_clock.seconds(since)


def report(label: str, done: int, total: int, worked: float | None = None) -> None:
    """Tell every installed reporter that `label` has done `done` of `total` (thread-safe);
    `worked`: the seconds of work this report covers, when the work timed itself (`PhaseClock`)."""
    with _lock:
        _process_clock(label, done, total, worked)
        reporters = list(_reporters)
    for reporter in reporters:
        reporter(label, done, total)


def end(label: str) -> None:
    """Tell every installed reporter with an `end` method that `label`'s work is over, whether or
    not it reached its total (thread-safe)."""
    with _lock:
        _process_clock.end(label)
        reporters = list(_reporters)
    for reporter in reporters:
        finish = getattr(reporter, "end", None)
        if callable(finish):
            finish(label)


@contextmanager
def reporting(*reporters: Reporter | None) -> Iterator[None]:
    """Install `reporters` (None ones skipped) for the duration of the block."""
    chosen = [r for r in reporters if r is not None]
    with _lock:
        _reporters.extend(chosen)
    try:
        yield
    finally:
        with _lock:
            for reporter in chosen:
                _reporters.remove(reporter)


class OpenPhases:
    """A reporter passing reports on to `forward` and ends to `finish`, remembering which labels are
    open (reported, not yet at their total nor ended), so the stage that opened them can end them."""

    def __init__(self, forward: Reporter, finish: Ender | None = None) -> None:
        """Pass reports to `forward` and ends to `finish` (when given)."""
        self.forward, self.finish = forward, finish
        self._open: dict[str, None] = {}  # insertion-ordered set
        self._lock = threading.Lock()

    def __call__(self, label: str, done: int, total: int) -> None:
        """A report of `label`: open until it reaches its total or is ended."""
        with self._lock:
            if complete(done, total):
                self._open.pop(label, None)
            else:
                self._open[label] = None
        self.forward(label, done, total)

    def end(self, label: str) -> None:
        """`label`'s work is over (passed on only when it was open)."""
        with self._lock:
            if label not in self._open:
                return
            del self._open[label]
        if self.finish is not None:
            self.finish(label)

    def end_all(self, prefix: str = "") -> None:
        """End every label still open that starts with `prefix` (the stage that reported them is over)."""
        with self._lock:
            labels = [label for label in self._open if label.startswith(prefix)]
        for label in labels:
            self.end(label)

    def one_at_a_time(self) -> Reporter:
        """A reporter for work whose phases follow one another (a bench prepare hook's: trajectories,
        then SFT, then DPO): its first report of a new label ends the label it reported before."""
        previous: list[str] = []

        def report_phase(label: str, done: int, total: int) -> None:
            if previous and previous[0] != label:
                self.end(previous.pop())
            if not previous:
                previous.append(label)
            self(label, done, total)

        return report_phase
