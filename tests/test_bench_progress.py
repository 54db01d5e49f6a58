"""What a user sees while `recgraph bench` runs: one progress row per method and per prepare phase,
added in run order when its work starts, each with its own elapsed time."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest
from rich.progress import Progress

from graphs.registry import METHODS, MethodSpec
from recgraph import bench_command
from recgraph.cli import main
from tests import crashy_method


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Progress]]:
    """The bench's progress bars, and `crashy` registered with its warm-up."""
    bars: list[Progress] = []
    build = bench_command.progress_bar

    def keep() -> Progress:
        bar = build()
        bars.append(bar)
        return bar

    monkeypatch.setattr(bench_command, "progress_bar", keep)
    spec = MethodSpec(
        "tests.crashy_method:graph", "classic", "planted failures", prepare="tests.crashy_method:prepare"
    )
    monkeypatch.setitem(METHODS, "crashy", spec)
    crashy_method.CRASH_ON.clear()
    crashy_method.PREPARE_FAILS[0] = False
    yield bars


def test_rows_appear_in_run_order_with_their_own_clock(tmp_path: Path, recorded: list[Progress]) -> None:
    args = ["bench", "--methods", "random,crashy,popularity", "--users", "6", "--out", str(tmp_path)]
    assert main(args) == 0
    tasks = recorded[0].tasks
    assert [t.description for t in tasks] == ["random", "crashy · warm-up", "crashy", "popularity"]
    assert all(t.finished for t in tasks)
    for before, after in pairwise(tasks):
        # each row started once the row before it had finished: its clock counts only its own work
        assert after.start_time >= before.start_time + before.finished_time
    assert tasks[2].completed == 6 and tasks[1].total == 2


def test_a_resumed_method_shows_its_logged_users(tmp_path: Path, recorded: list[Progress]) -> None:
    args = ["bench", "--methods", "popularity", "--users", "6", "--out", str(tmp_path)]
    assert main(args) == 0
    assert main(args) == 0  # nothing left to rank: the row is still there, full
    rows = recorded[1].tasks
    assert [(t.description, t.completed, t.total) for t in rows] == [("popularity", 6, 6)]
