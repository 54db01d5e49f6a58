"""`recgraph bench --server` on the authenticated server, refused without `--server-key` and ranking as
in-process with the service key; and a server that requires authentication without any key refuses
to start."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from recgraph.cli import main
from tests.auth.client import SERVICE
from tests.dev_server import DevServer, dev_command, working_folder
from tests.ports import free_port
from tests.test_server_runs import metrics, records

pytestmark = pytest.mark.slow


def bench(out: Path, dataset: str, *extra: str) -> int:
    """`recgraph bench` of itemknn and memrec on 4 users into `out`; its exit code."""
    args = ["bench", "--methods", "itemknn,memrec", "--users", "4", "--dataset", dataset, "--out", str(out)]
    return main([*args, "--concurrency", "4", *extra])


def test_bench_with_the_service_key_ranks_as_in_process(
    server: DevServer,
    dataset: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = f"http://127.0.0.1:{server.port}"
    monkeypatch.setenv("LANGSMITH_API_KEY", "a-langsmith-key-never-sent")  # the SDK would send it
    assert bench(tmp_path / "refused", dataset, "--server", url) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (
        f"recgraph: error: the LangGraph server {url} answered 401 Unauthorized: it requires a "
        "credential; pass --server-key KEY or set RECGRAPH_SERVER_KEY (a service key or token)"
    )
    assert bench(tmp_path / "here", dataset) == 0
    assert bench(tmp_path / "there", dataset, "--server", url, "--server-key", SERVICE) == 0
    assert records(tmp_path / "there") == records(tmp_path / "here")
    assert metrics(tmp_path / "there") == metrics(tmp_path / "here")


def test_require_auth_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("RECGRAPH_API_KEYS", "RECGRAPH_JWT"))
    }
    environment.update(RECGRAPH_REQUIRE_AUTH="1", RECGRAPH_HOME=str(tmp_path), LANGGRAPH_CLI_NO_ANALYTICS="1")
    done = subprocess.run(
        dev_command(free_port()),
        cwd=working_folder(tmp_path / "server"),
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if line.startswith("recgraph")]
    assert ours == [
        "recgraph: error: RECGRAPH_REQUIRE_AUTH is set but no RECGRAPH_API_KEYS, RECGRAPH_JWT_SECRET or "
        "RECGRAPH_JWT_PUBLIC_KEY is: refusing to start an open server"
    ]
    assert "Traceback" not in done.stderr
