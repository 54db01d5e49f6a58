"""LangSmith's own environment variables: `recgraph bench` ignores LANGSMITH_TRACING without --trace,
`recommend` follows it and shares the protocol id, a bare invoke is found by the same filters, and no
registered graph traces its routing functions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.registry import METHODS, SERVICE_GRAPHS, get_graph, service_graph
from graphs.tracing import QUIET, protocol_id
from recgraph.cli import main
from tests.langsmith_bench import BENCH, warnings_in
from tests.langsmith_stub import LangSmithStub


@pytest.fixture
def langchain_env(monkeypatch) -> Iterator[Any]:
    """`monkeypatch` for LangSmith's environment variables, read afresh: the langsmith package caches
    them (and LangChain's client) per process, so the caches are emptied before and after."""
    import langsmith.run_trees
    import langsmith.utils

    def forget() -> None:
        langsmith.utils.get_env_var.cache_clear()
        langsmith.utils.get_tracer_project.cache_clear()

    forget()
    monkeypatch.setattr(langsmith.run_trees, "_CLIENT", None)
    yield monkeypatch
    monkeypatch.undo()
    forget()


def test_bench_ignores_langsmith_tracing_without_trace(tmp_path: Path, langchain_env, capsys) -> None:
    from langchain_core.tracers.langchain import wait_for_all_tracers

    with LangSmithStub() as stub:
        langchain_env.setenv("LANGSMITH_ENDPOINT", stub.url)
        langchain_env.setenv("LANGSMITH_API_KEY", "dummy")
        langchain_env.setenv("LANGSMITH_TRACING", "true")
        langchain_env.delenv("LANGCHAIN_TRACING_V2")  # conftest's "false" would win over the above
        assert main([*BENCH, "--methods", "popularity", "--out", str(tmp_path)]) == 0
        wait_for_all_tracers()
    assert stub.operations == [] and stub.feedback == []
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "only with --trace" in warned[0]


def test_recommend_follows_the_environment_and_shares_the_protocol_id(langchain_env, capsys) -> None:
    import langsmith.run_trees
    from langchain_core.tracers.langchain import wait_for_all_tracers

    with LangSmithStub() as stub:
        langchain_env.setenv("LANGSMITH_ENDPOINT", stub.url)
        langchain_env.setenv("LANGSMITH_API_KEY", "dummy")
        langchain_env.setenv("LANGSMITH_TRACING", "true")
        langchain_env.delenv("LANGCHAIN_TRACING_V2")  # conftest's "false" would win over the above
        langchain_env.setenv("LANGSMITH_PROJECT", "one-user")
        assert main(["recommend", "--method", "arag", "--user", "7", "--candidates", "10"]) == 0
        wait_for_all_tracers()
        langsmith.run_trees.get_cached_client().flush()
    [root] = stub.roots()
    assert root["name"] == "arag" and root["session_name"] == "one-user"
    assert set(root["tags"]) == {"method:arag", "dataset:ml-100k", "backend:heuristic", "scenario:classic"}
    metadata = root["extra"]["metadata"]
    assert (metadata["user_id"], metadata["candidates"]) == ("7", 10)
    assert metadata["protocol_id"] == protocol_id("ml-100k", 10, 0, "classic")


def test_a_bare_invoke_is_found_by_the_same_filters(langchain_env) -> None:
    """`graph.invoke()` with no config (as from Python, or Studio's server with an empty `user_id`):
    the graph itself tags and describes its root run."""
    import langsmith.run_trees
    from langchain_core.tracers.langchain import wait_for_all_tracers

    request = {"user_id": "7", "candidates": ["1", "50", "181", "100"], "scenario": "classic"}
    with LangSmithStub() as stub:
        langchain_env.setenv("LANGSMITH_ENDPOINT", stub.url)
        langchain_env.setenv("LANGSMITH_API_KEY", "dummy")
        langchain_env.setenv("LANGSMITH_TRACING", "true")
        langchain_env.delenv("LANGCHAIN_TRACING_V2")
        get_graph("arag").invoke(request)
        get_graph("popularity").invoke(request, config={"metadata": {"user_id": ""}})
        wait_for_all_tracers()
        langsmith.run_trees.get_cached_client().flush()
    roots = {root["name"]: root for root in stub.roots()}
    for name in ("arag", "popularity"):
        assert set(roots[name]["tags"]) == {
            f"method:{name}",
            "dataset:ml-100k",
            "backend:heuristic",
            "scenario:classic",
        }
        metadata = roots[name]["extra"]["metadata"]
        assert (metadata["user_id"], metadata["dataset"], metadata["candidates"]) == ("7", "ml-100k", 4)
        assert (metadata["backend"], metadata["scenario"], metadata["method"]) == (
            "heuristic",
            "classic",
            name,
        )


def test_no_registered_graph_traces_its_routing_functions() -> None:
    graphs = [get_graph(name) for name in METHODS] + [service_graph(name) for name in SERVICE_GRAPHS]
    branching = 0
    for graph in graphs:
        for branches in graph.builder.branches.values():
            for spec in branches.values():
                branching += 1
                assert getattr(spec.path, QUIET, False), f"{graph.name}: {spec.path.name} is traced"
    assert branching >= 4  # ARAG's two routes, ChainRec's planner route, AMEM4Rec training's two
