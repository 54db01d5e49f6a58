"""`PhaseClock` (world/progress.py) times one-time work by the work it did, not by how long its
progress row stayed on screen: hand-made reports on a fake clock."""

from __future__ import annotations

import pytest

import world.progress as progress
from world.progress import PhaseClock


class FakeTime:
    """A `time.perf_counter` the test moves by hand."""

    def __init__(self) -> None:
        """Starts at 100 s."""
        self.now = 100.0

    def perf_counter(self) -> float:
        """The current fake time."""
        return self.now


@pytest.fixture
def clock_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(progress, "time", fake)
    return fake


def test_work_that_times_itself_counts_its_own_seconds_not_its_span(clock_time: FakeTime) -> None:
    clock = PhaseClock()
    clock("user-memory vectors", 100, 943, worked=2.0)  # at 100 s
    clock_time.now = 150.0  # 50 s of other work (trajectories) in between
    clock("trajectories", 1, 300)
    clock("user-memory vectors", 300, 943, worked=3.5)
    clock_time.now = 213.0
    clock("user-memory vectors", 500, 943, worked=1.25)
    clock("trajectories", 300, 300)
    seconds = clock.seconds()
    assert seconds == {"user-memory vectors": 6.75, "trajectories": 63.0}  # not the 113 s span
    # since 120 s: only the reports after it (3.5 + 1.25), and the trajectories' span after it
    assert clock.seconds(since=120.0) == {"user-memory vectors": 4.75, "trajectories": 63.0}
    assert clock.seconds(since=213.0) == {}


def test_ended_bouts_leave_the_idle_time_between_them_out(clock_time: FakeTime) -> None:
    clock = PhaseClock()
    clock("item vectors", 0, 40)  # at 100 s: a read starts
    clock_time.now = 104.0
    clock("item vectors", 8, 40)
    clock.end("item vectors")  # 4 s of work
    clock_time.now = 180.0  # rankings, no item vectors read
    clock("item vectors", 8, 40)
    clock_time.now = 181.5
    clock("item vectors", 16, 40)
    clock.end("item vectors")
    clock_time.now = 190.0
    clock.end("item vectors")  # a second end changes nothing
    assert clock.seconds() == {"item vectors": 5.5}  # 4 + 1.5, not 81.5
    assert clock.seconds(since=102.0) == {"item vectors": 3.5}  # 2 + 1.5


def test_process_reports_pass_worked_seconds_to_the_run_clock(
    clock_time: FakeTime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "_process_clock", PhaseClock())  # this test's reports only
    started = clock_time.now
    seen: list[tuple[str, int, int]] = []
    with progress.reporting(lambda *row: seen.append(row)):
        clock_time.now += 1.0
        progress.report("test · memories", 1, 9, worked=0.25)
        clock_time.now += 30.0
        progress.report("test · memories", 2, 9, worked=0.5)
    assert seen == [("test · memories", 1, 9), ("test · memories", 2, 9)]  # reporters see no seconds
    assert progress.phase_seconds(since=started) == {"test · memories": 0.75}


def test_work_reported_again_after_its_total_is_a_new_bout(clock_time: FakeTime) -> None:
    clock = PhaseClock()
    clock("interaction index", 0, 500)  # the bench world's index, at 100 s
    clock_time.now = 101.0
    clock("interaction index", 500, 500)
    clock_time.now = 400.0  # the training world builds its own, minutes later
    clock("interaction index", 0, 400)
    clock_time.now = 400.5
    clock("interaction index", 400, 400)
    assert clock.seconds() == {"interaction index": 1.5}  # not the 300.5 s between the first and last
