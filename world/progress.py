"""Progress of one-time per-dataset work (embedding the catalog, building indexes) for whoever watches.

World- and tool-level code cannot see the harness, so it reports here: `report(label, done, total)`
goes to the callback installed by `reporting(...)` (the bench installs its progress bar's phase
rows), and nowhere when nobody watches. Each label's first and latest report times are kept, so a
run can say how long each piece of one-time work took (`PhaseClock.seconds`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Reporter = Callable[[str, int, int], None]
"""Called as (label, done so far, total)."""

_lock = threading.Lock()
_reporters: list[Reporter] = []


class PhaseClock:
    """A reporter remembering, per label, when it was first and last reported."""

    def __init__(self) -> None:
        """No phase seen yet."""
        self._spans: dict[str, list[float]] = {}

    def __call__(self, label: str, done: int, total: int) -> None:
        """Note a report of `label`."""
        now = time.perf_counter()
        span = self._spans.setdefault(label, [now, now])
        span[1] = now

    def seconds(self, since: float | None = None) -> dict[str, float]:
        """Seconds between each label's first and last report (its work's duration), in first-seen
        order; with `since` (a `time.perf_counter()` value), only the part after it, for the labels
        reported after it."""
        if since is None:
            return {label: end - start for label, (start, end) in self._spans.items()}
        return {label: end - max(start, since) for label, (start, end) in self._spans.items() if end > since}


_process_clock = PhaseClock()


def phase_seconds(since: float | None = None) -> dict[str, float]:
    """Every label reported in this process (after `since`, a `time.perf_counter()` value, when
    given), with the seconds its work took (after `since`)."""
    with _lock:
        return _process_clock.seconds(since)


def report(label: str, done: int, total: int) -> None:
    """Tell every installed reporter that `label` has done `done` of `total` (thread-safe)."""
    with _lock:
        _process_clock(label, done, total)
        reporters = list(_reporters)
    for reporter in reporters:
        reporter(label, done, total)


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
