"""LangSmith trace review, against a LangSmith-compatible server on loopback (tests/langsmith_stub.py):
`recgraph bench --trace` sends one tagged root run per user (agents and their LLM calls beneath,
with token usage; no routing-function runs), Stage W runs linked to their method and user, and
each user's metrics as feedback; a dead or failing endpoint costs one warning and no metric."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.registry import METHODS, SERVICE_GRAPHS, get_graph, service_graph
from graphs.tracing import QUIET, protocol_id
from recgraph.cli import main
from tests.langsmith_stub import LangSmithStub
from tests.ports import free_port

USERS = 2
BENCH = ["bench", "--users", str(USERS), "--candidates", "10", "--seed", "0", "--concurrency", "2"]
SIM = ["--llm", "sim", "--llm-timeout", "30"]
"""The simulator with a timeout no busy machine reaches (no retries: one LLM run per agent)."""
TAGS = {"dataset:ml-100k", "backend:sim", "scenario:classic"}
ARAG_NODES = {"validate_input", "recall", "user_understanding", "nli", "context_summary", "item_ranker"}
MEMREC_NODES = {"validate_input", "curate", "synthesise", "rerank"}


def results(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """results.jsonl by (method, user)."""
    lines = (out / "results.jsonl").read_text().splitlines()
    return {(r["method"], r["user_id"]): r for r in map(json.loads, lines)}


def walk(run: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield run
    for child in run["children"]:
        yield from walk(child)


def draw(run: dict[str, Any], depth: int = 0) -> list[str]:
    """The run tree as indented names (LLM runs with their token usage)."""
    usage = run.get("extra", {}).get("metadata", {}).get("usage_metadata")
    shown = f" ({usage['input_tokens']} in / {usage['output_tokens']} out)" if usage else ""
    lines = ["  " * depth + run["name"] + shown]
    for child in run["children"]:
        lines += draw(child, depth + 1)
    return lines


def usage_of(run: dict[str, Any]) -> dict[str, int]:
    return run["extra"]["metadata"]["usage_metadata"]


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LangSmithStub, Path]]:
    """ARAG and MemRec (with Stage W) under the simulator, traced to the stub."""
    out = tmp_path_factory.mktemp("traced")
    with LangSmithStub() as stub, pytest.MonkeyPatch.context() as env:
        env.setenv("LANGSMITH_ENDPOINT", stub.url)
        env.setenv("LANGSMITH_API_KEY", "dummy")
        argv = [*BENCH, "--methods", "arag,memrec", *SIM, "--out", str(out)]
        assert main([*argv, "--trace", "--langsmith-project", "review"]) == 0
        yield stub, out


def roots_named(stub: LangSmithStub, name: str) -> list[dict[str, Any]]:
    return [stub.tree(root["id"]) for root in stub.roots() if root["name"] == name]


def test_each_recommendation_is_one_tagged_root_run(traced: tuple[LangSmithStub, Path]) -> None:
    stub, out = traced
    scored = results(out)
    assert sorted(root["name"] for root in stub.roots()) == sorted(
        ["arag"] * USERS + ["memrec"] * USERS + ["memrec_write"] * USERS
    )
    for method in ("arag", "memrec"):
        roots = roots_named(stub, method)
        assert {r["extra"]["metadata"]["user_id"] for r in roots} == {u for m, u in scored if m == method}
        for root in roots:
            assert set(root["tags"]) == {f"method:{method}", *TAGS}
            assert root["session_name"] == "review"
            metadata = root["extra"]["metadata"]
            assert (metadata["seed"], metadata["candidates"], metadata["backend"]) == (0, 10, "sim")
            assert metadata["protocol_id"] == protocol_id("ml-100k", 10, 0, "classic")
            assert root["outputs"]["ranking"] == scored[(method, metadata["user_id"])]["ranking"]


def test_agents_and_their_llm_calls_carry_token_usage(traced: tuple[LangSmithStub, Path]) -> None:
    stub, out = traced
    scored = results(out)
    for method, nodes in (("arag", ARAG_NODES), ("memrec", MEMREC_NODES)):
        for root in roots_named(stub, method):
            assert {child["name"] for child in root["children"]} == nodes
            assert not [run["name"] for run in walk(root) if run["name"].startswith("route_")]
            agents = scored[(method, root["extra"]["metadata"]["user_id"])]["agents"]
            for node in root["children"]:
                llm = [run for run in walk(node) if run["run_type"] == "llm"]
                if node["name"] not in agents:
                    assert llm == []  # validate_input, recall, curate: no LLM
                    continue
                assert len(llm) == agents[node["name"]]["llm_calls"] == 1
                assert usage_of(llm[0])["input_tokens"] == agents[node["name"]]["input_tokens"] > 0
                assert usage_of(llm[0])["output_tokens"] == agents[node["name"]]["output_tokens"] > 0
    print("\n".join(draw(roots_named(stub, "arag")[0])))  # the captured tree, for the review note


def test_stage_w_runs_link_to_the_method_and_user(traced: tuple[LangSmithStub, Path]) -> None:
    stub, out = traced
    users = {u for m, u in results(out) if m == "memrec"}
    warmups = roots_named(stub, "memrec_write")
    assert {w["extra"]["metadata"]["user_id"] for w in warmups} == users
    for run in warmups:
        assert set(run["tags"]) == {"method:memrec", "phase:stage_w", *TAGS}
        assert [child["name"] for child in run["children"]][-1] == "commit"
        # Stage W runs Stage R first (its facets and N'_k feed the write): two LM_Mem calls.
        nodes = [child["name"] for child in run["children"]]
        assert nodes.index("synthesise") < nodes.index("propagate") < nodes.index("commit")
        assert [r["name"] for r in walk(run) if r["run_type"] == "llm"] == ["ChatOpenAI", "ChatOpenAI"]


def test_feedback_holds_each_users_scores(traced: tuple[LangSmithStub, Path]) -> None:
    stub, out = traced
    scored = results(out)
    by_run: dict[str, dict[str, float]] = {}
    for entry in stub.feedback:
        assert entry["trace_id"] == entry["run_id"]
        by_run.setdefault(str(entry["run_id"]), {})[entry["key"]] = entry["score"]
    ranked = [root for method in ("arag", "memrec") for root in roots_named(stub, method)]
    assert set(by_run) == {str(root["id"]) for root in ranked}
    for root in ranked:
        record = scored[(root["name"], root["extra"]["metadata"]["user_id"])]
        assert by_run[str(root["id"])] == {  # the langsmith client sends scores to 4 decimals
            "hit@1": record["metrics"]["hit@1"],
            "ndcg@5": round(record["metrics"]["ndcg@5"], 4),
            "target_rank": record["rank"],
        }


def test_amem4rec_training_windows_link_to_the_method_and_user(tmp_path: Path, monkeypatch) -> None:
    with LangSmithStub() as stub:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
        argv = [*BENCH, "--methods", "amem4rec", *SIM, "--out", str(tmp_path), "--trace"]
        assert main(argv) == 0
    users = {u for m, u in results(tmp_path)}
    training = json.loads((tmp_path / "metrics.json").read_text())["methods"]["amem4rec"]["training"]
    windows = roots_named(stub, "amem4rec_train")
    assert len(windows) == training["this_run"]["windows"] > 0
    assert {w["extra"]["metadata"]["user_id"] for w in windows} <= users
    assert len({w["extra"]["metadata"]["window"] for w in windows}) == len(windows)
    for run in windows:
        assert set(run["tags"]) == {"method:amem4rec", "phase:training", *TAGS}
    assert sorted(r["extra"]["metadata"]["user_id"] for r in roots_named(stub, "amem4rec")) == sorted(users)


def comparable(out: Path) -> dict[str, Any]:
    """metrics.json without wall-time figures (the only fields allowed to differ between runs)."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if "seconds" not in k}
        return value

    return scrub(json.loads((out / "metrics.json").read_text()))


def warnings_in(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("recgraph: warning:")]


def test_a_dead_endpoint_costs_one_warning_and_no_metric(tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [*BENCH, "--methods", "arag", *SIM]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "cannot be reached" in warned[0] and "without tracing" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")


def test_an_endpoint_failing_mid_run_costs_one_warning(tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [*BENCH, "--methods", "arag", "--llm", "heuristic"]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    with LangSmithStub(refuse_uploads=True) as stub:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
        assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
    assert any(path.endswith("(refused)") for path in stub.paths)
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "uploads to" in warned[0] and "failed" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")


def test_a_stalled_endpoint_does_not_hold_the_run(tmp_path: Path, monkeypatch, capsys) -> None:
    import bench.run.tracing

    monkeypatch.setattr(bench.run.tracing, "FLUSH_SECONDS", 1.0)
    argv = [*BENCH, "--methods", "arag", "--llm", "heuristic"]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    with LangSmithStub(stall_uploads=True) as stub:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
        assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
        stalled = [path for path in stub.paths if path.endswith("(stalled)")]
    assert stalled and stub.operations == []
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "stalled" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")


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
