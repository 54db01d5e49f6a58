"""`recgraph bench --server` / `recommend --server` against real `langgraph dev` servers on loopback.

Each server starts as tests/test_studio_server.py starts one (no --allow-blocking, its own empty
RECGRAPH_HOME) on a small ml-100k slice. Checked: the same results.jsonl rankings and metrics as the
in-process run (heuristic and `--llm sim`), MemRec's Stage W and AMEM4Rec's training run on the
server, and AgentCF's training through it (its memories written there by `agentcf_commit`); the
server's errors shown with their message; an unreachable URL refused in one line within
10 s; a replica killed with SIGKILL mid-run, its users retried on the other; LangSmith run names,
tags and metadata of the runs the client started.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk._async import http as langgraph_sdk_http

from graphs.method_spec import remote_name
from graphs.registry import studio_examples
from graphs.tracing import dataset_label, protocol_id
from recgraph.cli import main
from tests.dev_server import DevServer, dev_server
from tests.langsmith_stub import LangSmithStub
from world.environment import get_environment
from world.paths import dataset_cache

USERS = "4"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory, write_studio_slice) -> str:
    """The slice every server and the client read (the same path on this machine)."""
    return str(write_studio_slice(tmp_path_factory.mktemp("server-runs-data"), studio_examples().values()))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, dataset: str) -> Iterator[DevServer]:
    with dev_server(tmp_path_factory, dataset, "langgraph-dev-server-runs") as running:
        yield running


def url(server: DevServer) -> str:
    return f"http://127.0.0.1:{server.port}"


def bench(out: Path, dataset: str, methods: str, *extra: str) -> int:
    args = ["bench", "--methods", methods, "--users", USERS, "--dataset", dataset, "--out", str(out)]
    return main([*args, "--concurrency", "4", *extra])


def kill_server(server: DevServer) -> None:
    """SIGKILL the process group of the `langgraph dev` whose RECGRAPH_HOME is the server's own."""
    marker = f"RECGRAPH_HOME={server.home}".encode()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0"):
                os.killpg(os.getpgid(int(environ.parent.name)), signal.SIGKILL)
                return
        except OSError:  # a process that ended meanwhile, or not ours to read
            continue
    raise AssertionError(f"no process serves {server.home}")


def untimed(value: Any) -> Any:
    """`value` without its timings (every key naming seconds, at any depth)."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if "seconds" not in k}
    return value


def records(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """results.jsonl's scored users by (method, user): ranking, metrics, usage totals, details."""
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    keep = ("ranking", "rank", "metrics", "usage", "details", "ranking_origin")
    scored = [r for r in lines if "ranking" in r]
    return {(r["method"], r["user_id"]): untimed({k: r.get(k) for k in keep}) for r in scored}


def metrics(out: Path) -> dict[str, dict[str, Any]]:
    """metrics.json per method, without timings, servers and the names of where state lives."""
    found = json.loads((out / "metrics.json").read_text())["methods"]
    # stage_w_user_memories_read counts the memory texts this process embedded, and read_ahead
    # what its prepare read for the rankings to find: on a deployment both happen on the server.
    dropped = (
        "seconds_per_user",
        "setup_seconds",
        "servers",
        "settings",
        "whole_run",
        "stage_w_user_memories_read",
        "read_ahead",
    )
    for entry in found.values():
        for key in dropped:
            entry.pop(key, None)
        if "training" in entry:
            for key in ("this_run", "pool", "memories", "reused"):
                entry["training"].pop(key, None)
    return untimed(found)


def test_bench_on_a_server_ranks_as_in_process(server: DevServer, dataset: str, tmp_path: Path) -> None:
    """Heuristic backend; MemRec's warm-up and AMEM4Rec's training run on the server."""
    methods = "itemknn,arag,memrec,memrec_no_write,amem4rec,chainrec"
    assert bench(tmp_path / "here", dataset, methods) == 0
    assert bench(tmp_path / "there", dataset, methods, "--server", url(server)) == 0
    # the server (no database) kept the memories and pool in its working folder
    assert (server.folder / remote_name(tmp_path / "there")).is_dir()
    assert records(tmp_path / "there") == records(tmp_path / "here")
    assert metrics(tmp_path / "there") == metrics(tmp_path / "here")
    served = json.loads((tmp_path / "there" / "metrics.json").read_text())["methods"]
    assert served["memrec"]["servers"]["runs"][url(server)] > int(USERS)  # warm-up writes + rankings
    assert served["amem4rec"]["settings"]["amem4rec_pool"].startswith("runs/remote/")
    assert not any((tmp_path / "there").glob("amem4rec_pool/*"))  # the client wrote no pool


def test_sequential_warmup_on_a_server_ranks_as_in_process(
    server: DevServer, dataset: str, tmp_path: Path
) -> None:
    """`memrec_warmup=sequential` on a deployment: each write is proposed there, then applied there,
    before the next is asked; the same rankings and warm-up jobs as in process."""
    methods, knob = "memrec,memrec_no_write", ["--set", "memrec_warmup=sequential"]
    assert bench(tmp_path / "here", dataset, methods, *knob) == 0
    assert bench(tmp_path / "there", dataset, methods, *knob, "--server", url(server)) == 0
    assert records(tmp_path / "there") == records(tmp_path / "here")
    log = "memrec_memory/memrec.warmup.jsonl"
    jobs = [[json.loads(line)["job"] for line in (tmp_path / where / log).read_text().splitlines()]
            for where in ("here", "there")]  # fmt: skip
    assert jobs[0] == jobs[1] and len(jobs[0]) == int(USERS)


def test_agentcf_trains_through_the_server_and_ranks_as_in_process(
    server: DevServer, dataset: str, tmp_path: Path
) -> None:
    """AgentCF's interactions run on the server, its memories are written there (agentcf_commit), and a
    rerun reuses them: the same rankings, metrics and memories as in process."""
    local = dataset_cache(get_environment(dataset).dataset) / "agentcf"
    shutil.rmtree(local, ignore_errors=True)
    there = tmp_path / "there"
    assert bench(there, dataset, "agentcf", "--server", url(server)) == 0
    assert not local.exists()  # the client wrote no memories file
    served = json.loads((there / "metrics.json").read_text())["methods"]["agentcf"]
    location = served["settings"]["agentcf_memory"]
    assert location.startswith("runs/remote/") and (server.folder / location).is_file()
    assert not served["training"]["reused"] and served["training"]["this_run"]["steps"] > 0
    (there / "results.jsonl").unlink()  # rank again: the memories on the server are reused
    assert bench(there, dataset, "agentcf", "--server", url(server)) == 0
    again = json.loads((there / "metrics.json").read_text())["methods"]["agentcf"]["training"]
    assert again["reused"] and again["this_run"]["steps"] == 0
    assert bench(tmp_path / "here", dataset, "agentcf") == 0
    assert records(there) == records(tmp_path / "here")
    assert metrics(there) == metrics(tmp_path / "here")  # memories' fingerprint and counts included


def test_bench_with_the_simulator_reports_usage_as_in_process(
    server: DevServer, dataset: str, tmp_path: Path
) -> None:
    sim = ("--llm", "sim")
    assert bench(tmp_path / "here", dataset, "arag,vanilla_llm", *sim) == 0
    assert bench(tmp_path / "there", dataset, "arag,vanilla_llm", *sim, "--server", url(server)) == 0
    assert records(tmp_path / "there") == records(tmp_path / "here")
    served = metrics(tmp_path / "there")
    assert served == metrics(tmp_path / "here")
    assert served["arag"]["llm_calls"] > 0 and served["arag"]["input_tokens"] > 0


def test_a_server_error_is_shown_with_its_message(
    server: DevServer, dataset: str, capsys: pytest.CaptureFixture[str]
) -> None:
    endpoint = ("--llm", "openai:any", "--base-url", "http://127.0.0.1:9/v1")
    one = ("--method", "vanilla_llm", "--user", "1", "--candidates", "5", "--dataset", dataset)
    code = main(["recommend", *one, *endpoint, "--server", url(server)])
    assert code == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("recgraph: error: the LLM endpoint http://127.0.0.1:9/v1 is unreachable")
    assert line.endswith(f"(from {url(server)}, assistant vanilla_llm)")


def test_an_unreachable_server_stops_in_one_line(
    dataset: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    started = time.monotonic()
    assert bench(tmp_path, dataset, "itemknn", "--server", "http://127.0.0.1:9") == 2
    assert time.monotonic() - started <= 10
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("recgraph: error: cannot reach the LangGraph server http://127.0.0.1:9")


def test_a_method_that_prepares_local_state_is_refused(
    dataset: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench(tmp_path, dataset, "chainrec_learned", "--server", "http://127.0.0.1:9") == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert "chainrec_learned cannot run on a LangGraph server" in line


def test_a_replica_killed_mid_run_loses_and_doubles_nothing(
    server: DevServer,
    dataset: str,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The SDK waits out a cut-off run for a restart (1 + 2 + 4 + 5 + 5 s before it gives up); a
    # killed dev server never comes back, so the test does not sit through that backoff.
    monkeypatch.setattr(langgraph_sdk_http, "_reconnect_delay", lambda attempt, base, cap: 0.05)
    slow = ("--llm", "sim", "--sim-latency", "0.3", "--users", "12")
    with dev_server(tmp_path_factory, dataset, "langgraph-dev-server-runs-b") as other:
        out = tmp_path / "there"

        def kill_after_three() -> None:
            deadline = time.time() + 300
            while time.time() < deadline:
                path = out / "results.jsonl"
                if path.is_file() and path.read_text().count('"ranking"') >= 3:
                    kill_server(other)
                    return
                time.sleep(0.05)

        killer = threading.Thread(target=kill_after_three)
        killer.start()
        servers = f"{url(server)},http://127.0.0.1:{other.port}"
        assert bench(out, dataset, "arag", *slow, "--server", servers) == 0
        killer.join()
    assert bench(tmp_path / "here", dataset, "arag", *slow) == 0
    assert records(out) == records(tmp_path / "here")
    lines = (out / "results.jsonl").read_text().splitlines()
    assert sum('"ranking"' in line for line in lines) == 12  # each user once
    stats = json.loads((out / "metrics.json").read_text())["methods"]["arag"]["servers"]
    assert f"http://127.0.0.1:{other.port}" in stats["lost"]
    assert 1 <= stats["retried"] <= 4  # the runs in flight on the killed replica (or the next one sent)


def test_runs_started_by_the_client_carry_bench_s_tags_and_metadata(
    tmp_path_factory: pytest.TempPathFactory, dataset: str, tmp_path: Path
) -> None:
    with LangSmithStub() as stub:
        tracing = {
            "LANGSMITH_TRACING": "true",
            "LANGCHAIN_TRACING_V2": "true",
            "LANGSMITH_ENDPOINT": stub.url,
            "LANGSMITH_API_KEY": "dummy",
            "LANGSMITH_PROJECT": "server-runs",
        }
        with dev_server(tmp_path_factory, dataset, "langgraph-dev-server-runs-traced", **tracing) as traced:
            assert bench(tmp_path, dataset, "arag", "--server", f"http://127.0.0.1:{traced.port}") == 0
            users = {user for _, user in records(tmp_path)}

            def ours() -> list[dict[str, Any]]:
                # Only this run's users are counted: the stub sees whatever the server traces.
                return [
                    r
                    for r in stub.roots()
                    if r["name"] == "arag" and r["extra"]["metadata"].get("user_id") in users
                ]

            deadline = time.time() + 60
            while len(ours()) < int(USERS) and time.time() < deadline:
                time.sleep(0.5)
        roots = ours()
    assert len(roots) == int(USERS) == len(users)
    label = dataset_label(dataset)
    for root in roots:
        assert {"method:arag", f"dataset:{label}", "backend:heuristic", "scenario:classic"} <= set(
            root["tags"]
        )
        metadata = root["extra"]["metadata"]
        assert metadata["user_id"] in users
        assert metadata["protocol_id"] == protocol_id(dataset, 10, 0, "classic")
        assert (metadata["dataset"], metadata["backend"], metadata["scenario"]) == (
            label,
            "heuristic",
            "classic",
        )
