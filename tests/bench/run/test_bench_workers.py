"""`recgraph bench --workers N`: the same metrics and faults as one process, a dead worker reported in
one line, a resume from what finished, and bad values refused."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from bench.protocol.spec import EvalCase
from bench.run.workers import concurrency_shares, shards
from recgraph.cli import main

METHODS = "popularity,random,vanilla_llm"
TIMINGS = ("seconds_per_user", "setup_seconds")
"""metrics.json fields that are wall-clock time (the only ones that may differ run to run)."""


def bench_args(out: Path, workers: int, users: int = 16, latency: float = 0.0) -> list[str]:
    """A small sim run: a classic method, a seeded one and an LLM one, with faults that retry."""
    return [
        "bench",
        "--methods",
        METHODS,
        "--dataset",
        "ml-100k",
        "--users",
        str(users),
        "--candidates",
        "10",
        "--concurrency",
        "4",
        "--llm",
        "sim",
        "--sim-latency",
        str(latency),
        "--faults",
        "0.3",
        "--fault-kinds",
        "http_500,malformed_json,unknown_ids,duplicate_ids",
        "--allow-fallbacks",
        "--workers",
        str(workers),
        "--out",
        str(out),
    ]


def quality(out: Path) -> dict:
    """metrics.json without its timings."""
    document = json.loads((out / "metrics.json").read_text())
    for row in document["methods"].values():
        for key in TIMINGS:
            row.pop(key, None)
    return document


def logged_pairs(out: Path) -> list[tuple[str, str]]:
    """(method, user) of every line of results.jsonl."""
    lines = (out / "results.jsonl").read_text().splitlines()
    return [(r["method"], r["user_id"]) for r in map(json.loads, lines)]


@pytest.fixture(scope="module")
def one_process(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference: the same run with `--workers 1`."""
    out = tmp_path_factory.mktemp("workers1")
    assert main(bench_args(out, workers=1)) == 0
    return out


def test_two_workers_give_the_metrics_and_faults_of_one(one_process: Path, tmp_path: Path) -> None:
    assert main(bench_args(tmp_path, workers=2)) == 0
    two, one = quality(tmp_path), quality(one_process)
    assert two == one  # every metric, usage count, fault and repair kind, and the simulator's stats
    assert one["sim_server"]["faults"]["http_500"] > 0  # the comparison covered retried requests
    assert one["methods"]["vanilla_llm"]["repairs"] > 0
    pairs = logged_pairs(tmp_path)
    assert sorted(pairs) == sorted(logged_pairs(one_process)) and len(set(pairs)) == len(pairs) == 48


def worker_pids(parent: int) -> list[int]:
    """Pids of the spawned worker processes of `parent` (read from /proc; not its resource tracker)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:  # the process ended while we looked
            continue
        if int(fields[1]) == parent and b"spawn_main" in cmdline:
            found.append(int(stat.parent.name))
    return found


def test_a_killed_worker_stops_the_run_in_one_line_and_the_rerun_resumes(
    one_process: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = bench_args(tmp_path, workers=2, latency=0.3)
    codes: list[int] = []
    run = threading.Thread(target=lambda: codes.append(main(args)))
    run.start()
    results = tmp_path / "results.jsonl"
    try:
        deadline = time.time() + 300
        while time.time() < deadline and run.is_alive():
            done = results.read_text().count("\n") if results.is_file() else 0
            if done >= 36:  # popularity and random are in, vanilla_llm is running in both workers
                break
            time.sleep(0.02)
        victims = worker_pids(os.getpid())
        assert len(victims) == 2, "the run must be killed while its workers rank"
        os.kill(victims[0], signal.SIGKILL)
    finally:
        run.join(120)
    assert codes == [2]
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("recgraph: error: a bench worker stopped while ranking vanilla_llm (worker ")
    assert "exit code -9" in lines[-1] and "rerun the same command to resume" in lines[-1]
    done_before = logged_pairs(tmp_path)
    assert 36 <= len(done_before) < 48
    assert not (tmp_path / "metrics.json").exists() or "vanilla_llm" not in quality(tmp_path)["methods"]
    with results.open("a") as log:  # and the parent killed while writing the next line
        log.write(json.dumps({"method": "vanilla_llm", "user_id": "torn"})[:20])

    assert main(bench_args(tmp_path, workers=2)) == 0  # only the missing users, over the workers
    pairs = logged_pairs(tmp_path)
    assert pairs[: len(done_before)] == done_before and len(set(pairs)) == len(pairs) == 48
    assert quality(tmp_path)["methods"] == quality(one_process)["methods"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--workers", "0"], "--workers must be at least 1, got 0"),
        (["--workers", "3", "--concurrency", "2"], "--workers 3 needs --concurrency of at least 3"),
        (["--workers", "2", "--trace"], "--trace runs in one process: use it with --workers 1"),
    ],
)
def test_bad_workers_value_is_one_line(tmp_path: Path, capsys, extra: list[str], message: str) -> None:
    args = ["bench", "--methods", "popularity", "--users", "5", "--out", str(tmp_path / "run"), *extra]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("recgraph: error: ") and message in err and "\n" not in err
    assert not (tmp_path / "run").exists()  # refused before anything ran


def test_shards_split_every_case_once_and_the_concurrency_in_total() -> None:
    cases = [EvalCase(str(u), "t", ["t", "n"]) for u in range(7)]
    parts = shards(cases, 3)
    assert [[c.user_id for c in part] for part in parts] == [["0", "3", "6"], ["1", "4"], ["2", "5"]]
    assert concurrency_shares(32, 3) == [11, 11, 10] and sum(concurrency_shares(5, 2)) == 5
    assert shards(cases[:1], 2)[1] == []

