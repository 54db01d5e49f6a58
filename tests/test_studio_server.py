"""`langgraph dev` serves every registered graph offline (the server LangGraph Studio talks to).

The server starts as users start it (no `--allow-blocking`: a blocking call on its event loop
fails the run) with an empty `RECGRAPH_HOME`, so every run below meets cold caches. Every graph
in the registry, future ones included, runs its registry `studio_example` twice: cold (first
call per node: embeddings, indexes and models are built) and warm (on the loop). The graphs run
on a small slice of ml-100k (tests/studio_data.py) so the cold MiniLM embeddings take seconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest

from graphs.registry import METHODS, SERVICE_GRAPHS, descriptions, studio_examples
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from state.memrec.context import MemRecContext
from tests.studio_data import OTHER_REQUEST, write_slice

REPO = Path(__file__).resolve().parent.parent
SERVED = [*METHODS, *SERVICE_GRAPHS]


@dataclass(frozen=True)
class DevServer:
    """A running `langgraph dev` and the dataset its graph runs use."""

    port: int
    """Where it listens on 127.0.0.1."""
    dataset: str
    """Path of the ml-100k slice holding every id of the registry's Studio examples."""
    home: Path
    """Its RECGRAPH_HOME (empty when it started)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(port: int, path: str, body: dict | None = None, timeout: float = 600) -> Any:
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


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    port = free_port()
    home = tmp_path_factory.mktemp("cold-recgraph-home")
    examples = [*studio_examples().values(), OTHER_REQUEST]
    dataset = write_slice(tmp_path_factory.mktemp("studio-data"), examples)
    langgraph = Path(sys.executable).with_name("langgraph")
    (REPO / ".cache").mkdir(exist_ok=True)
    log = open(REPO / ".cache" / "langgraph-dev-test.log", "w")  # noqa: SIM115
    env = {
        **os.environ,
        "RECGRAPH_HOME": str(home),
        "LANGSMITH_TRACING": "false",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    for inherited in ("RECGRAPH_LLM", "RECGRAPH_BASE_URL", "RECGRAPH_SIM_URL"):
        env.pop(inherited, None)  # the defaults Studio shows are the project's own
    process = subprocess.Popen(
        [str(langgraph), "dev", "--no-browser", "--no-reload", "--port", str(port)],
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=env,
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
        assert not any(home.iterdir()), "the server's cache must start empty"
        yield DevServer(port, str(dataset), home)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def assistants(server: DevServer) -> dict[str, dict]:
    """The server's assistants by graph id."""
    return {a["graph_id"]: a for a in call(server.port, "/assistants/search", {"limit": 100})}


def test_every_graph_is_served_with_its_registry_description(server: DevServer) -> None:
    listed = json.loads((REPO / "langgraph.json").read_text())["graphs"]
    served = assistants(server)
    assert set(served) == set(listed) == set(SERVED)
    assert {name: a["description"] for name, a in served.items()} == descriptions()


def test_settings_form_shows_every_default(server: DevServer) -> None:
    schemas = call(server.port, f"/assistants/{assistants(server)['arag']['assistant_id']}/schemas")
    fields = schemas["context_schema"]["properties"]
    assert [name for name, spec in fields.items() if "default" not in spec] == []
    assert (fields["llm"]["default"], fields["base_url"]["default"]) == ("heuristic", "")
    assert fields["dataset"]["default"] == "ml-100k"


def test_settings_form_shows_the_common_and_the_method_s_own_knobs_only(server: DevServer) -> None:
    served = assistants(server)
    for name, knobs in (
        ("arag", AragContext),
        ("memrec_no_read", MemRecContext),
        ("itemknn", BaselinesContext),
    ):
        schemas = call(server.port, f"/assistants/{served[name]['assistant_id']}/schemas")
        assert set(schemas["context_schema"]["properties"]) == {f.name for f in fields(knobs)}, name


@pytest.mark.parametrize("name", SERVED)
def test_graph_runs_its_studio_example_cold_then_warm_then_other_items(server: DevServer, name: str) -> None:
    example = studio_examples()[name]
    context = {"dataset": server.dataset}
    cold = run_wait(server.port, name, example, context)
    warm = run_wait(server.port, name, example, context)
    for result in (cold, warm):
        assert result["trace"], f"{name} posted nothing on its blackboard"
    if name in METHODS:
        assert sorted(cold["ranking"]) == sorted(example["candidates"])
        assert cold["trace"][0]["role"] == "validate_input"
        assert warm["ranking"] == cold["ranking"]  # heuristic backend: deterministic
        # Items no earlier run read: their vectors are embedded (files written) off the event loop.
        other = run_wait(server.port, name, OTHER_REQUEST, context)
        assert sorted(other["ranking"]) == sorted(OTHER_REQUEST["candidates"])


def test_run_wait_returns_a_ranking_on_full_ml_100k(server: DevServer) -> None:
    """The default dataset, loaded from a cold cache (ml-100k is extracted from the recbole wheel)."""
    result = run_wait(server.port, "popularity", {"user_id": "1", "candidates": ["1", "50", "181"]})
    assert result["ranking"] == ["50", "181", "1"]
    assert [m["role"] for m in result["trace"]] == ["validate_input", "popularity_ranker"]


def test_bad_input_shows_its_own_message(server: DevServer) -> None:
    result = run_raw(server.port, "itemknn", {"user_id": "1", "candidates": ["7", "7"]})
    assert result["__error__"] == {
        "error": "InvalidRecInput",
        "message": "invalid RecInput: candidates: duplicate candidate item id '7'",
    }


def test_project_errors_reach_studio_with_their_message(server: DevServer) -> None:
    missing = str(server.home.parent / "no-such-dataset")
    result = run_raw(server.port, "itemknn", studio_examples()["itemknn"], {"dataset": missing})
    assert result["__error__"] == {
        "error": "DatasetNotFoundError",
        "message": f"unknown dataset {missing!r}: not a built-in (ml-100k) and not a path",
    }
    context = {"dataset": server.dataset, "llm": "sim"}
    result = run_raw(server.port, "vanilla_llm", studio_examples()["vanilla_llm"], context)
    assert result["__error__"]["error"] == "RecgraphError"
    assert result["__error__"]["message"].startswith("the sim backend needs a running simulator")


def test_agent_graphs_show_their_agents_as_nodes(server: DevServer) -> None:
    by_graph = {name: a["assistant_id"] for name, a in assistants(server).items()}
    drawn = call(server.port, f"/assistants/{by_graph['arag']}/graph")
    nodes = {node["id"] for node in drawn["nodes"]}
    assert {"recall", "user_understanding", "nli", "context_summary", "item_ranker"} <= nodes
    drawn = call(server.port, f"/assistants/{by_graph['memrec']}/graph")
    assert {"curate", "synthesise", "rerank"} <= {node["id"] for node in drawn["nodes"]}
    drawn = call(server.port, f"/assistants/{by_graph['memrec_write']}/graph")
    assert {"select_neighbours", "propagate", "commit"} <= {node["id"] for node in drawn["nodes"]}
