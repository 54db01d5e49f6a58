"""Rows of work done on demand (`OPEN` totals): open until their stage ends them, their total then
what they did, and no ETA against a total nobody will reach."""

from rich.progress import Progress

from recgraph.bench_progress import BenchProgress
from recgraph.progress_log import ProgressLog
from world.progress import OPEN, OpenPhases, PhaseClock


def test_an_open_row_finishes_at_what_it_did() -> None:
    lines: list[str] = []
    now = [0.0]
    log = ProgressLog(lines.append, clock=lambda: now[0], interval=10.0)
    rows = BenchProgress(Progress(disable=True), 5, {}, log)
    rows.phase("user-memory vectors", 16, OPEN)
    now[0] = 12.0
    rows.phase("user-memory vectors", 32, OPEN)  # not complete: still open
    log.tick()
    assert log.open_rows() == ["user-memory vectors"]
    rows.end("user-memory vectors")
    assert lines[0] == "user-memory vectors: started, 16"
    assert all("ETA" not in line and "%" not in line for line in lines)
    assert lines[-1].startswith("user-memory vectors: finished, 32/32 in 0:00:12")
    task = rows.progress.tasks[0]
    assert task.total == task.completed == 32


def test_an_open_row_stays_open_for_its_stage_and_its_clock() -> None:
    clock, ended = PhaseClock(), []
    phases = OpenPhases(clock, ended.append)
    phases("user-memory vectors", 10, OPEN)
    phases("user-memory vectors", 20, OPEN)
    phases.end_all()
    assert ended == ["user-memory vectors"]
    assert list(clock.seconds()) == ["user-memory vectors"]
