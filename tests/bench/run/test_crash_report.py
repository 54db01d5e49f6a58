"""A crash is one line: a node raising stops the run at once, names the method, the user and the
node on stderr, appends the traceback to errors.log, keeps what finished (results and partial
reports), exits 4, and the rerun ranks only the missing users. The failure is planted in a
test-only method (tests/crashy_method.py)."""

from __future__ import annotations

import gc
import json
import pickle
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.crash import EXIT_METHOD_CRASHED, MethodCrashed, crash_node
from graphs.registry import METHODS, MethodSpec
from recgraph.cli import main
from tests import crashy_method
from world.environment import get_environment

USERS = 12


@pytest.fixture
def crashy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`crashy` registered for this test, with no failure planted yet."""
    spec = MethodSpec(
        "tests.crashy_method:graph", "classic", "planted failures", prepare="tests.crashy_method:prepare"
    )
    monkeypatch.setitem(METHODS, "crashy", spec)
    crashy_method.CRASH_ON.clear()
    crashy_method.RANKED.clear()
    crashy_method.PREPARE_FAILS[0] = False
    yield


def args(out: Path) -> list[str]:
    """random, then crashy, then popularity, one user at a time (so the order is fixed)."""
    return ["bench", "--methods", "random,crashy,popularity", "--users", str(USERS), "--candidates", "10",
            "--concurrency", "1", "--out", str(out)]  # fmt: skip


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def test_a_crash_is_one_line_and_the_rerun_resumes(tmp_path: Path, crashy: None, capsys) -> None:
    users = [
        case.user_id for case in plan_cases(get_environment("ml-100k"), Protocol("ml-100k", users=USERS))
    ]
    planted = users[4]
    crashy_method.CRASH_ON.add(planted)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(args(tmp_path)) == EXIT_METHOD_CRASHED
        gc.collect()  # an unawaited coroutine warns when it is collected
    assert not [w for w in caught if "never awaited" in str(w.message)]
    errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert errors == [
        f"recgraph: error: crashy crashed on user '{planted}' in node 'crashy_ranker': ValueError: planted "
        f"failure (traceback in {tmp_path / 'errors.log'}; the same command resumes)"
    ]
    log = (tmp_path / "errors.log").read_text()
    assert re.match(
        rf"=== \d{{4}}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00 crashy user={planted} node=crashy_ranker\n", log
    )
    assert "Traceback (most recent call last)" in log and "in score" in log
    assert re.search(
        r"ValueError: planted failure\nDuring task with name 'crashy_ranker' and id '[-0-9a-f]+'\n\n$", log
    )

    kept = records(tmp_path)
    assert [r["user_id"] for r in kept if r["method"] == "crashy"] == users[:4]  # stopped at once
    assert sum(r["method"] == "random" for r in kept) == USERS
    assert not [r for r in kept if r["method"] == "popularity"]  # never started
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert list(metrics["methods"]) == ["random"] and metrics["methods"]["random"]["users"] == USERS
    assert metrics["failed"] == {
        "method": "crashy", "user": planted, "node": "crashy_ranker", "error": "ValueError: planted failure",
        "phase": "ranking", "users_done": 4, "users": USERS, "not_run": ["popularity"],
        "errors_log": "errors.log",
    }  # fmt: skip
    report = (tmp_path / "report.md").read_text()
    assert f"**crashy failed on user '{planted}' in node 'crashy_ranker'" in report
    assert "4 of its 12 users are kept" in report and "Not run because the run stopped: popularity" in report
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"

    crashy_method.CRASH_ON.clear()
    crashy_method.RANKED.clear()
    assert main(args(tmp_path)) == 0
    assert users[4:] == crashy_method.RANKED  # only the missing users
    assert len(records(tmp_path)) == 3 * USERS
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert "failed" not in metrics and metrics["methods"]["crashy"]["users"] == USERS
    assert "crashed" not in (tmp_path / "report.md").read_text()
    assert (tmp_path / "errors.log").read_text() == log  # appended only on a crash


def test_a_crash_while_preparing_names_the_phase(tmp_path: Path, crashy: None, capsys) -> None:
    crashy_method.PREPARE_FAILS[0] = True
    assert main([*args(tmp_path)[:2], "crashy,popularity", *args(tmp_path)[3:]]) == EXIT_METHOD_CRASHED
    errors = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(errors) == 1
    assert errors[0].startswith(
        "recgraph: error: crashy crashed while preparing: RuntimeError: planted failure while preparing ("
    )
    assert "crashy user=None node=None" in (tmp_path / "errors.log").read_text()
    assert not (tmp_path / "metrics.json").exists()  # nothing finished: no report to write
    assert crashy_method.RANKED == []


def test_the_node_is_read_from_langgraph_notes_across_subgraphs() -> None:
    error = ValueError("x")
    error.add_note("During task with name 'inner' and id '1'")
    error.add_note("During task with name 'outer' and id '2'")
    assert crash_node(error) == "outer/inner"
    wrapped = RuntimeError("wrapper")
    wrapped.__cause__ = error
    assert crash_node(wrapped) == "outer/inner"
    assert crash_node(KeyError("no note")) is None


def test_a_crash_crosses_processes_intact() -> None:
    crash = MethodCrashed.of("m", "7", ZeroDivisionError("division by zero"))
    copy = pickle.loads(pickle.dumps(crash))
    assert str(copy) == str(crash) == "m crashed on user '7': ZeroDivisionError: division by zero"
    assert copy.details == crash.details and "ZeroDivisionError" in copy.details


def test_a_crash_outside_bench_is_one_line_too(tmp_path: Path, monkeypatch, capsys) -> None:
    from recgraph import bench_command

    def perf(args: object) -> int:  # e.g. `bench perf`, which ranks through the same invocation
        raise MethodCrashed.of("m", "7", ZeroDivisionError("division by zero"))

    monkeypatch.setattr(bench_command, "bench_or_perf", perf)
    assert main(["bench", "perf", "--out", str(tmp_path / "perf")]) == EXIT_METHOD_CRASHED
    log = tmp_path / "perf" / "errors.log"
    assert capsys.readouterr().err.splitlines() == [
        f"recgraph: error: m crashed on user '7': ZeroDivisionError: division by zero (traceback in {log})"
    ]
    assert "m user=7 node=None" in log.read_text()


def test_recommend_crash_is_one_line_with_the_traceback_logged(
    tmp_path: Path, crashy: None, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    crashy_method.CRASH_ON.add("1")
    code = main(["recommend", "--method", "crashy", "--user", "1", "--candidates", "10"])
    log = tmp_path / "home" / "errors.log"
    assert code == EXIT_METHOD_CRASHED
    assert capsys.readouterr().err.splitlines() == [
        "recgraph: error: crashy crashed on user '1' in node 'crashy_ranker': ValueError: planted failure "
        f"(traceback in {log})"
    ]
    text = log.read_text()
    assert "crashy user=1 node=crashy_ranker" in text and "Traceback" in text
