"""`recgraph` end to end: outputs, resume after a kill, concurrency, and bad input."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from recgraph.cli import main

RUN = [sys.executable, "-m", "recgraph.cli"]
METHODS = "random,popularity,itemknn,bpr,embedding"


def bench_args(out: Path, users: int = 40, concurrency: int = 4, methods: str = METHODS) -> list:
    return [
        "bench",
        "--methods",
        methods,
        "--dataset",
        "ml-100k",
        "--users",
        str(users),
        "--candidates",
        "10",
        "--seed",
        "0",
        "--concurrency",
        str(concurrency),
        "--out",
        str(out),
    ]


def quality(path: Path) -> dict:
    """metrics.json without the wall-clock fields (the only ones that may differ run to run)."""
    document = json.loads((path / "metrics.json").read_text())
    for row in document["methods"].values():
        row.pop("seconds_per_user")
        row.pop("setup_seconds", None)
    return document


def test_bench_writes_the_four_files(tmp_path: Path) -> None:
    assert main(bench_args(tmp_path, users=40)) == 0
    assert {p.name for p in tmp_path.iterdir()} == {
        "metrics.json",
        "results.jsonl",
        "report.md",
        "report.png",
    }
    document = json.loads((tmp_path / "metrics.json").read_text())
    assert document["protocol"] == {
        "candidates": 10,
        "seed": 0,
        "scenario": "classic",
        "users": 40,
        "llm": "heuristic",
    }
    row = document["methods"]["itemknn"]
    for key in (
        "hit@1",
        "hit@3",
        "hit@5",
        "ndcg@3",
        "ndcg@5",
        "mrr",
        "avg_hr",
        "users",
        "llm_calls",
        "input_tokens",
        "output_tokens",
        "est_cost_usd",
        "seconds_per_user",
        "fallbacks",
        "repairs",
    ):
        assert key in row
    assert row["users"] == 40
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 5 * 40
    record = json.loads(lines[0])
    assert record["ranking"][record["rank"] - 1] == record["target"]
    assert "heuristic (no LLM" in (tmp_path / "report.md").read_text()
    assert (tmp_path / "report.png").read_bytes()[:4] == b"\x89PNG"


def test_concurrency_does_not_change_metrics(tmp_path: Path) -> None:
    assert main(bench_args(tmp_path / "c1", users=60, concurrency=1)) == 0
    assert main(bench_args(tmp_path / "c8", users=60, concurrency=8)) == 0
    assert quality(tmp_path / "c1") == quality(tmp_path / "c8")


def test_killed_run_resumes_with_identical_metrics(tmp_path: Path) -> None:
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    args = bench_args(killed, users=300, concurrency=2, methods="popularity,itemknn")
    process = subprocess.Popen(
        [*RUN, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    results = killed / "results.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline:
        if results.is_file() and results.read_text().count("\n") >= 200:
            break
        time.sleep(0.02)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    done_before = results.read_text().count("\n")
    assert 200 <= done_before < 600, "the run must be killed half-way"
    assert not (killed / "metrics.json").exists()

    resumed = subprocess.run([*RUN, *args], capture_output=True, text=True, check=True)
    assert resumed.returncode == 0
    lines = results.read_text().splitlines()
    assert len(lines) == 600  # every (method, user) once: nothing redone, nothing lost
    assert len({(json.loads(x)["method"], json.loads(x)["user_id"]) for x in lines}) == 600
    assert main(bench_args(clean, users=300, concurrency=2, methods="popularity,itemknn")) == 0
    assert quality(killed) == quality(clean)


def test_partial_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    args = bench_args(tmp_path, users=20, methods="popularity")
    assert main(args) == 0
    expected = quality(tmp_path)
    results = tmp_path / "results.jsonl"
    lines = results.read_text().splitlines(keepends=True)
    results.write_text("".join(lines[:10]) + lines[10][:25])  # a crash mid-write
    assert main(args) == 0
    assert len(results.read_text().splitlines()) == 20
    assert quality(tmp_path) == expected


def test_resume_with_other_protocol_is_refused(tmp_path: Path, capsys) -> None:
    assert main(bench_args(tmp_path, users=10, methods="popularity")) == 0
    other = bench_args(tmp_path, users=10, methods="popularity")
    other[other.index("--seed") + 1] = "1"
    assert main(other) == 2
    assert "holds a run with another protocol" in capsys.readouterr().err


def test_users_all_evaluates_every_eligible_user(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    from bench.protocol.eligibility import eligibility
    from world.environment import get_environment

    args = ["bench", "--methods", "popularity", "--dataset", str(tiny_dataset_dir), "--candidates", "3"]
    assert main([*args, "--users", "all", "--out", str(tmp_path / "all")]) == 0
    eligible = eligibility(get_environment(str(tiny_dataset_dir)), "classic", 3, False, False).users
    document = json.loads((tmp_path / "all" / "metrics.json").read_text())
    assert document["protocol"]["users"] is None
    rows = [json.loads(line) for line in (tmp_path / "all" / "results.jsonl").read_text().splitlines()]
    assert sorted(row["user_id"] for row in rows) == sorted(eligible) and len(eligible) == 3
    assert "users: all eligible requested" in (tmp_path / "all" / "report.md").read_text()
    # A sample smaller than the eligible users is a sample.
    assert main([*args, "--users", "2", "--out", str(tmp_path / "two")]) == 0
    assert len((tmp_path / "two" / "results.jsonl").read_text().splitlines()) == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bench", "--dataset", "no-such-data", "--users", "5"], "unknown dataset 'no-such-data'"),
        (["bench", "--dataset", "/nonexistent/folder/x", "--users", "5"], "unknown dataset"),
        (["bench", "--candidates", "1", "--users", "5"], "--candidates must be at least 2"),
        (["bench", "--users", "0"], "--users must be at least 1"),
        (["bench", "--users", "most"], "--users must be a number of users or all, got 'most'"),
        (["bench", "--methods", "nope", "--users", "5"], "unknown method 'nope'"),
        (["recommend", "--method", "popularity", "--user", "424242"], "unknown user id '424242'"),
        (["bench", "--llm", "gpt-9", "--users", "5"], "unknown --llm 'gpt-9'"),
    ],
)
def test_bad_command_line_input(tmp_path: Path, args: list, message: str) -> None:
    result = subprocess.run(
        [*RUN, *args, *(["--out", str(tmp_path)] if args[0] == "bench" else [])],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    error_lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(error_lines) == 1 and message in error_lines[0]


def test_truncated_inter_file_on_the_command_line(tmp_path: Path) -> None:
    from tests.test_loaders_atomic_sequential import copy_ml100k

    folder = copy_ml100k(tmp_path)
    inter = folder / "ml-100k.inter"
    raw = inter.read_bytes()
    inter.write_bytes(raw[: raw.index(b"\n", 5000) + 4])
    result = subprocess.run(
        [*RUN, "bench", "--dataset", str(folder), "--users", "5", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert f"{inter}, line " in result.stderr and "tab-separated fields" in result.stderr


def test_datasets_and_recommend(shared_data: Path, capsys) -> None:
    assert main(["datasets", str(shared_data / "CDs-100-user-sparse")]) == 0
    shown = capsys.readouterr().out
    assert "CDs-100-user-sparse" in shown and "order only" in shown
    assert "ml-100k" not in shown and "1682" not in shown  # only the paths given
    assert main(["datasets", str(shared_data / "CDs-100-user-sparse"), "ml-100k"]) == 0
    shown = capsys.readouterr().out
    assert "943" in shown and "1682" in shown and "100000" in shown
    assert shown.index("CDs-100-user-sparse") < shown.index("ml-100k")  # in the order given
    assert main(["recommend", "--method", "itemknn", "--user", "1", "--candidates", "10"]) == 0
    shown = capsys.readouterr().out
    assert "held-out target" in shown and "heuristic" in shown
