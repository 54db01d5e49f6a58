"""`langgraph dev` serves every graph offline (the server LangGraph Studio talks to)."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(port: int, path: str, body: dict | None = None, timeout: float = 120) -> object:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method="POST" if data else "GET",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read() or b"null")


def run_wait(port: int, assistant_id: str, payload: dict) -> dict:
    """`/runs/wait` for one input; a failed run fails the test with the server's error."""
    result = call(port, "/runs/wait", {"assistant_id": assistant_id, "input": payload})
    assert isinstance(result, dict)
    if "__error__" in result:
        pytest.fail(f"{assistant_id} run failed in the dev server: {result['__error__']}")
    return result


@pytest.fixture(scope="module")
def server():
    port = free_port()
    langgraph = Path(sys.executable).with_name("langgraph")
    (REPO / ".cache").mkdir(exist_ok=True)
    log = open(REPO / ".cache" / "langgraph-dev-test.log", "w")  # noqa: SIM115
    process = subprocess.Popen(
        [str(langgraph), "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env={**os.environ, "LANGSMITH_TRACING": "false", "LANGGRAPH_CLI_NO_ANALYTICS": "1"},
    )
    try:
        deadline = time.time() + 120
        while True:
            try:
                if call(port, "/ok", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    message = "langgraph dev did not come up; see .cache/langgraph-dev-test.log"
                    raise RuntimeError(message) from None
                time.sleep(0.5)
        yield port
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def test_every_graph_is_served(server: int) -> None:
    listed = json.loads((REPO / "langgraph.json").read_text())["graphs"]
    assistants = call(server, "/assistants/search", {"limit": 100})
    assert {a["graph_id"] for a in assistants} == set(listed)


def test_run_wait_returns_a_ranking(server: int) -> None:
    result = run_wait(server, "popularity", {"user_id": "1", "candidates": ["1", "50", "181"]})
    assert result["ranking"] == ["50", "181", "1"]
    assert [m["role"] for m in result["trace"]] == ["validate_input", "popularity_ranker"]


def test_bad_input_shows_the_same_message(server: int) -> None:
    result = call(
        server,
        "/runs/wait",
        {
            "assistant_id": "itemknn",
            "input": {"user_id": "1", "candidates": ["7", "7"]},
        },
    )
    assert "duplicate candidate item id '7'" in json.dumps(result)


def test_agent_graphs_show_their_agents_as_nodes(server: int) -> None:
    assistants = call(server, "/assistants/search", {"limit": 100})
    by_graph = {a["graph_id"]: a["assistant_id"] for a in assistants}
    drawn = call(server, f"/assistants/{by_graph['arag']}/graph")
    nodes = {node["id"] for node in drawn["nodes"]}
    assert {"recall", "user_understanding", "nli", "context_summary", "item_ranker"} <= nodes
    drawn = call(server, f"/assistants/{by_graph['memrec']}/graph")
    assert {"curate", "synthesise", "rerank"} <= {node["id"] for node in drawn["nodes"]}
    drawn = call(server, f"/assistants/{by_graph['memrec_write']}/graph")
    assert {"select_neighbours", "propagate", "commit"} <= {node["id"] for node in drawn["nodes"]}
