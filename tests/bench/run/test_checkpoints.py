"""Graph runs checkpointed with LangGraph's savers (bench/run/checkpoints.py): one thread per (protocol,
method, user), in `<out>/checkpoints.sqlite` or PostgreSQL; checkpoints change no result, and a
user whose run crashed mid-graph is resumed from its last checkpoint by the same command."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from bench.protocol.plan import plan_cases
from bench.protocol.spec import EvalCase, Protocol
from bench.run.checkpoints import (
    CHECKPOINTS_FILE,
    async_saver,
    checkpoints_for,
    describe_thread,
    protocol_id,
    set_up,
    thread_config,
    thread_state,
)
from bench.run.crash import RunStopped
from bench.run.runner import run_benchmark
from graphs.registry import METHODS, MethodSpec, get_graph
from state.context import Context
from tests import crashy_method
from world.environment import get_environment
from world.results_log import ResultsLog

PROTOCOL = Protocol("ml-100k", users=4)
TIMINGS = ("seconds",)
"""Record fields that are wall-clock time (the only ones that may differ run to run)."""


def cases(protocol: Protocol = PROTOCOL) -> list[EvalCase]:
    """The protocol's users with their candidates."""
    return plan_cases(get_environment(protocol.dataset), protocol)


def bench(out: Path, methods: Sequence[str], checkpoints: bool, protocol: Protocol = PROTOCOL) -> None:
    """`recgraph bench` (heuristic backend) over `methods`, writing results.jsonl in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    context = Context(dataset=protocol.dataset)
    run_benchmark(methods, cases(protocol), protocol, log, 2, context, checkpoints=checkpoints)


def records(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """results.jsonl by (method, user), without timings."""
    found = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        found[(record["method"], record["user_id"])] = {k: v for k, v in record.items() if k not in TIMINGS}
    return found


def test_checkpoints_change_no_result_and_each_user_has_a_finished_thread(tmp_path: Path) -> None:
    methods = ["itemknn", "arag", "memrec"]
    bench(tmp_path / "plain", methods, checkpoints=False)
    bench(tmp_path / "threads", methods, checkpoints=True)
    assert records(tmp_path / "threads") == records(tmp_path / "plain")
    assert not (tmp_path / "plain" / CHECKPOINTS_FILE).exists()

    threads = checkpoints_for(tmp_path / "threads", PROTOCOL)
    assert threads.sqlite_path == str(tmp_path / "threads" / CHECKPOINTS_FILE)
    assert threads.thread_id("arag", "7") == f"{protocol_id(PROTOCOL)}:arag:7"
    user = cases()[0].user_id
    for method in methods:
        state = thread_state(threads, method, user)
        assert (
            state.next == ()
            and state.values["ranking"] == records(tmp_path / "plain")[(method, user)]["ranking"]
        )
    lines = describe_thread(threads, "arag", user)
    assert lines[0] == f"thread {threads.thread_id('arag', user)} in {threads.sqlite_path}"
    assert "next: user_understanding, nli" in "\n".join(lines) and lines[-1].endswith("next: (finished)")
    assert describe_thread(threads, "arag", "no-such-user")[1:] == ["no checkpoint"]


def test_a_run_continued_from_any_checkpoint_ranks_the_same(tmp_path: Path) -> None:
    """Every intermediate checkpoint (ARAG's parallel step included) resumes to the same output:
    the state survives the saver's serialisation."""
    bench(tmp_path, ["arag"], checkpoints=True)
    user = cases()[0].user_id
    logged = records(tmp_path)[("arag", user)]
    threads = checkpoints_for(tmp_path, PROTOCOL)

    async def replays() -> list[list[str]]:
        async with async_saver(threads) as saver:
            graph = get_graph("arag").copy(update={"checkpointer": saver})
            history = [s async for s in graph.aget_state_history(thread_config(threads, "arag", user))]
            context = Context(dataset=PROTOCOL.dataset)
            middle = [s for s in history if s.next and s.metadata["step"] >= 0]
            assert len(middle) == 5
            return [(await graph.ainvoke(None, s.config, context=context))["ranking"] for s in middle]

    assert asyncio.run(replays()) == [logged["ranking"]] * 5


def test_the_postgres_saver_keeps_the_threads(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    methods = ["itemknn", "arag"]
    bench(tmp_path / "plain", methods, checkpoints=False)
    monkeypatch.setenv("RECGRAPH_DATABASE_URL", postgres_url)
    bench(tmp_path / "threads", methods, checkpoints=True)
    assert records(tmp_path / "threads") == records(tmp_path / "plain")
    assert not (tmp_path / "threads" / CHECKPOINTS_FILE).exists()
    threads = checkpoints_for(tmp_path / "threads", PROTOCOL)
    assert threads.database_url == postgres_url and threads.sqlite_path is None
    set_up(threads)  # idempotent
    user = cases()[-1].user_id
    assert (
        thread_state(threads, "arag", user).values["ranking"]
        == records(tmp_path / "plain")[("arag", user)]["ranking"]
    )


@pytest.fixture
def crashy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`crashy` (tests/crashy_method.py) registered for this test, with no failure planted yet."""
    monkeypatch.setitem(
        METHODS, "crashy", MethodSpec("tests.crashy_method:graph", "classic", "planted failures")
    )
    crashy_method.CRASH_ON.clear()
    crashy_method.RANKED.clear()
    yield
    crashy_method.CRASH_ON.clear()
    crashy_method.RANKED.clear()


@pytest.mark.parametrize("saver", ["sqlite", "postgres"])
def test_a_crashed_user_resumes_from_its_last_checkpoint(
    tmp_path: Path, crashy: None, saver: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    if saver == "postgres":
        monkeypatch.setenv("RECGRAPH_DATABASE_URL", request.getfixturevalue("postgres_url"))
    protocol = Protocol("ml-100k", users=6)
    users = [case.user_id for case in cases(protocol)]
    planted = users[2]
    crashy_method.CRASH_ON.add(planted)
    with pytest.raises(RunStopped):
        bench(tmp_path, ["crashy"], checkpoints=True, protocol=protocol)
    threads = checkpoints_for(tmp_path, protocol)
    stopped = thread_state(threads, "crashy", planted)
    assert stopped.next == ("crashy_ranker",)  # validate_input is done and checkpointed
    assert [str(task.error) for task in stopped.tasks] == ["ValueError('planted failure')"]
    assert (
        "error: crashy_ranker: ValueError('planted failure')"
        in describe_thread(threads, "crashy", planted)[-1]
    )

    crashy_method.CRASH_ON.clear()
    crashy_method.RANKED.clear()
    bench(tmp_path, ["crashy"], checkpoints=True, protocol=protocol)
    assert users[2:] == crashy_method.RANKED  # the planted user's ranker ran again, nothing before it
    history = describe_thread(threads, "crashy", planted)[1:]
    assert [line.split(" (")[0] for line in history] == ["step -1", "step 0", "step 1", "step 2"]  # one run

    bench(tmp_path / "plain", ["crashy"], checkpoints=False, protocol=protocol)
    assert records(tmp_path) == records(tmp_path / "plain")
    assert (tmp_path / CHECKPOINTS_FILE).exists() == (saver == "sqlite")


def test_a_finished_thread_whose_user_was_not_logged_starts_over(tmp_path: Path, crashy: None) -> None:
    bench(tmp_path, ["crashy"], checkpoints=True)
    user = cases()[0].user_id
    kept = [line for line in (tmp_path / "results.jsonl").read_text().splitlines() if f'"{user}"' not in line]
    (tmp_path / "results.jsonl").write_text("\n".join(kept) + "\n")
    crashy_method.RANKED.clear()
    bench(tmp_path, ["crashy"], checkpoints=True)
    assert [user] == crashy_method.RANKED
    history = describe_thread(checkpoints_for(tmp_path, PROTOCOL), "crashy", user)[1:]
    assert len(history) == 4 and history[-1].endswith("(finished)")  # the old run was deleted


def test_workers_checkpoint_their_users(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "results.jsonl", PROTOCOL.as_dict())
    context = Context(dataset=PROTOCOL.dataset)
    run_benchmark(["itemknn"], cases(), PROTOCOL, log, 2, context, workers=2, checkpoints=True)
    threads = checkpoints_for(tmp_path, PROTOCOL)
    assert all(thread_state(threads, "itemknn", case.user_id).next == () for case in cases())
    assert all(thread_state(threads, "itemknn", case.user_id).created_at for case in cases())
