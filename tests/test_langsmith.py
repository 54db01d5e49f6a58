"""LangSmith trace review, against a LangSmith-compatible server on loopback (tests/langsmith_stub.py):
`recgraph bench --trace` sends one tagged root run per user (agents and their LLM calls beneath,
with token usage; no routing-function runs), Stage W runs linked to their method and user, and
each user's metrics as feedback. A dead, failing or stalled endpoint: test_langsmith_endpoints.py;
LangSmith's own environment variables: test_langsmith_environment.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphs.tracing import protocol_id
from recgraph.cli import main
from tests.langsmith_bench import BENCH, SIM, USERS
from tests.langsmith_stub import LangSmithStub

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
    extractions = roots_named(stub, "amem4rec_extract")  # the shared extraction, asked once per window
    extracted = {e["extra"]["metadata"]["window"] for e in extractions}
    assert len(extractions) == len(extracted)
    assert extracted == {w["extra"]["metadata"]["window"] for w in windows}
    for run in [*windows, *extractions]:
        assert set(run["tags"]) == {"method:amem4rec", "phase:training", *TAGS}
    assert sorted(r["extra"]["metadata"]["user_id"] for r in roots_named(stub, "amem4rec")) == sorted(users)
