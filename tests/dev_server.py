"""`langgraph dev` for the tests: started as users start it (no `--allow-blocking`) on an empty
`RECGRAPH_HOME`, in a working folder of its own, and called over HTTP on loopback.

A server's working folder is its own (not the checkout) because `langgraph dev` keeps its queue and
threads in `./.langgraph_api` and resumes the pending runs it finds there, and a deployment writes
its `runs/remote/` state relative to it: servers of tests running side by side (pytest-xdist) or one
after another would otherwise share both. The folder's langgraph.json is the checkout's with every
path made absolute, so the same graphs and auth load.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ports import free_port

REPO = Path(__file__).resolve().parent.parent
LANGGRAPH = Path(sys.executable).with_name("langgraph")
"""The `langgraph` command of this environment."""


@dataclass(frozen=True)
class DevServer:
    """A running `langgraph dev` and the dataset its graph runs use."""

    port: int
    """Where it listens on 127.0.0.1."""
    dataset: str
    """Path of the ml-100k slice holding every id of the registry's Studio examples."""
    home: Path
    """Its RECGRAPH_HOME (empty when it started)."""
    folder: Path
    """Its working folder (langgraph.json, `.langgraph_api`, a deployment's `runs/remote/`)."""
    log: Path
    """Its output (stdout and stderr)."""


def working_folder(folder: Path) -> Path:
    """`folder` made a `langgraph dev` working folder: the checkout's langgraph.json with absolute paths."""
    config = json.loads((REPO / "langgraph.json").read_text())
    config["dependencies"] = [str(REPO)]
    for spec in [*config["graphs"].values(), config["auth"]]:
        spec["path"] = str(REPO / spec["path"])
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "langgraph.json").write_text(json.dumps(config, indent=2))
    return folder


def dev_command(port: int) -> list[str]:
    """`langgraph dev` on `port`, no browser, no reloading."""
    return [str(LANGGRAPH), "dev", "--no-browser", "--no-reload", "--port", str(port)]


def call(port: int, path: str, body: dict | None = None, timeout: float = 600) -> Any:
    """The decoded JSON answer of GET `path` (POST of `body` when given) on the server at `port`."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method="POST" if data else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def run_raw(port: int, assistant_id: str, payload: dict, context: dict | None = None) -> dict:
    """`/runs/wait` for one input; the server's answer as is (an error is `{"__error__": ...}`)."""
    body: dict[str, Any] = {"assistant_id": assistant_id, "input": payload}
    if context:
        body["context"] = context
    result = call(port, "/runs/wait", body)
    assert isinstance(result, dict)
    return result


def run_wait(port: int, assistant_id: str, payload: dict, context: dict | None = None) -> dict:
    """`/runs/wait` for one input; a failed run fails the test with the server's error."""
    result = run_raw(port, assistant_id, payload, context)
    if "__error__" in result:
        pytest.fail(f"{assistant_id} run failed in the dev server: {result['__error__']}")
    return result


@contextmanager
def dev_server(
    tmp_path_factory: pytest.TempPathFactory, dataset: str, log_name: str = "langgraph-dev-test", **env: str
) -> Iterator[DevServer]:
    """`langgraph dev` on an empty RECGRAPH_HOME in its own working folder, logging to
    `<folder>/<log_name>.log`; `env` adds to its environment (e.g. LangSmith's)."""
    port = free_port()
    home = tmp_path_factory.mktemp("cold-recgraph-home")
    folder = working_folder(tmp_path_factory.mktemp(log_name))
    log_path = folder / f"{log_name}.log"
    log = log_path.open("w")
    environment = {
        **os.environ,
        "RECGRAPH_HOME": str(home),
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        **env,
    }
    for inherited in ("RECGRAPH_LLM", "RECGRAPH_BASE_URL", "RECGRAPH_SIM_URL"):
        environment.pop(inherited, None)  # the defaults Studio shows are the project's own
    process = subprocess.Popen(
        dev_command(port),
        cwd=folder,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=environment,
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                if call(port, "/ok", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise RuntimeError(f"langgraph dev did not come up; see {log_path}") from None
                time.sleep(0.2)
        assert not any(home.iterdir()), "the server's cache must start empty"
        yield DevServer(port, dataset, home, folder, log_path)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
