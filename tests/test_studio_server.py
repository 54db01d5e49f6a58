"""`langgraph dev` serves every registered graph offline (the server LangGraph Studio talks to).

The server starts as users start it (no `--allow-blocking`: a blocking call on its event loop
fails the run) with an empty `RECGRAPH_HOME`, so every run below meets cold caches. Every graph
in the registry, future ones included, runs its registry `studio_example` twice: cold (first
call per node: embeddings, indexes and models are built) and warm (on the loop). The graphs run
on a small slice of ml-100k (the `write_studio_slice` fixture) so the cold MiniLM embeddings take seconds.
"""

from __future__ import annotations

import json
import time
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from graphs.registry import METHODS, SERVICE_GRAPHS, descriptions, studio_examples
from state.arag.context import AragContext
from state.baselines.context import BaselinesContext
from state.memrec.context import MemRecContext
from tests.dev_server import REPO, DevServer, call, dev_server, run_raw, run_wait
from tests.langsmith_stub import LangSmithStub

SERVED = [*METHODS, *SERVICE_GRAPHS]
NEEDS_TRAINING = [name for name, spec in METHODS.items() if spec.trained_state]
"""Methods whose graph reads trained state that `recgraph bench` trains and Studio does not."""


@pytest.fixture
def server(studio_server: DevServer) -> DevServer:
    """The session's Studio server (tests/conftest.py), shared with tests/chainrec/test_studio.py."""
    return studio_server


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


@pytest.mark.parametrize("name", [name for name in SERVED if name not in NEEDS_TRAINING])
def test_graph_runs_its_studio_example_cold_then_warm_then_other_items(
    server: DevServer, name: str, other_studio_request: dict[str, Any]
) -> None:
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
        other = run_wait(server.port, name, other_studio_request, context)
        assert sorted(other["ranking"]) == sorted(other_studio_request["candidates"])


@pytest.mark.parametrize("name", NEEDS_TRAINING)
def test_a_method_needing_trained_state_refuses_in_one_line_on_a_cold_cache(
    server: DevServer, name: str
) -> None:
    """The learned planner never plans with another planner behind its name: without a checkpoint it
    says how to train one, over every scenario of the run (`all`: ChainRec's planner scope); what
    runs never depends on what the cache holds."""
    result = run_raw(server.port, name, studio_examples()[name], {"dataset": server.dataset})
    assert result["__error__"]["error"] == "MissingCheckpoint"
    message = result["__error__"]["message"]
    assert message.startswith(f"no learned planner checkpoint for {server.dataset} (all): train one with")
    train = (
        "recgraph chainrec train --library router" if name.startswith("router") else "recgraph chainrec train"
    )
    assert f"{train} --dataset" in message and "\n" not in message


def test_a_studio_run_is_found_by_the_readme_s_filters(
    tmp_path_factory: pytest.TempPathFactory, studio_dataset: str
) -> None:
    """A run started from Studio (the Agent Server API), traced to a LangSmith server on loopback,
    carries the tags and metadata `recgraph recommend` runs carry."""
    with LangSmithStub() as stub:
        tracing = {
            "LANGSMITH_TRACING": "true",
            "LANGCHAIN_TRACING_V2": "true",  # conftest sets it "false", which would win
            "LANGSMITH_ENDPOINT": stub.url,
            "LANGSMITH_API_KEY": "dummy",
            "LANGSMITH_PROJECT": "studio",
        }
        with dev_server(tmp_path_factory, studio_dataset, "langgraph-dev-traced-test", **tracing) as traced:
            run_wait(traced.port, "arag", studio_examples()["arag"], {"dataset": traced.dataset})
            deadline = time.time() + 60
            while not [r for r in stub.roots() if r["name"] == "arag"] and time.time() < deadline:
                time.sleep(0.5)
        [root] = [r for r in stub.roots() if r["name"] == "arag"]
    dataset = Path(studio_dataset).name
    assert {"method:arag", f"dataset:{dataset}", "backend:heuristic", "scenario:classic"} <= set(root["tags"])
    metadata = root["extra"]["metadata"]
    assert (metadata["user_id"], metadata["dataset"], metadata["backend"]) == ("1", dataset, "heuristic")
    assert (metadata["scenario"], metadata["candidates"]) == ("classic", 5)


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
    drawn = call(server.port, f"/assistants/{by_graph['agentcf']}/graph")
    assert {"item_agents", "retrieve_memories", "user_agent"} <= {node["id"] for node in drawn["nodes"]}
    drawn = call(server.port, f"/assistants/{by_graph['agentcf_train']}/graph")
    assert {"user_agent", "user_reflection", "item_reflection"} <= {node["id"] for node in drawn["nodes"]}
