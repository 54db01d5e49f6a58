"""Backends end to end: real ChatOpenAI against the loopback simulator, and the local SmolLM2."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.stats.fault_report import observed_faults
from recgraph.cli import main

RUN = [sys.executable, "-m", "recgraph.cli"]


def test_faulty_simulator_run_completes_with_matching_fault_counts(tmp_path: Path) -> None:
    args = ["bench", "--methods", "vanilla_llm,vanilla_rag", "--llm", "sim", "--faults", "0.3",
            "--users", "40", "--concurrency", "8", "--out", str(tmp_path)]
    assert main(args) == 0
    document = json.loads((tmp_path / "metrics.json").read_text())
    assert document["protocol"]["llm"] == "sim"
    injected = document["sim_server"]["faults"]
    assert sum(injected.values()) > 5  # faults really happened
    observed = observed_faults(document["methods"])
    for kind, count in observed.items():
        assert count == injected[kind], kind
    lines = [json.loads(x) for x in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 80
    for record in lines:  # the runner checks permutations; here we check nothing was lost
        assert record["ranking"][record["rank"] - 1] == record["target"]
    row = document["methods"]["vanilla_llm"]
    assert row["llm_calls"] >= 40 and row["input_tokens"] > 0 and row["output_tokens"] > 0
    assert row["agents"]["vanilla_llm_ranker"]["llm_calls"] == row["llm_calls"]


def test_perf_writes_the_documented_schema(tmp_path: Path) -> None:
    args = ["bench", "perf", "--methods", "vanilla_llm", "--users", "8", "--latency", "0.05",
            "--concurrency", "4", "--out", str(tmp_path)]
    assert main(args) == 0
    report = json.loads((tmp_path / "perf.json").read_text())
    assert report["latency_s"] == 0.05 and report["concurrency"] == 4
    row = report["methods"]["vanilla_llm"]
    for key in ("overhead_ms_per_user", "critical_path_depth", "throughput_users_per_s",
                "ideal_users_per_s", "efficiency", "input_tokens_per_user", "llm_calls_per_user"):
        assert key in row
    assert row["critical_path_depth"] == 1 and row["llm_calls_per_user"] == 1
    assert row["ideal_users_per_s"] == pytest.approx(4 / 0.05)
    assert 0 < row["efficiency"] <= 1.05
    assert row["overhead_ms_per_user"] > 0 and row["input_tokens_per_user"] > 100


def test_openai_backend_without_a_key_is_a_clear_error(tmp_path: Path) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if k != "OPENAI_API_KEY"}
    result = subprocess.run([*RUN, "bench", "--methods", "vanilla_llm", "--llm", "openai:gpt-4o-mini",
                             "--users", "2", "--out", str(tmp_path)], capture_output=True, text=True, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "needs OPENAI_API_KEY" in result.stderr


def test_local_smollm2_ranks_end_to_end() -> None:
    from agents.local_llm import smollm2_path
    from graphs.baselines.llm import recency_llm_graph
    from state.baselines.context import BaselinesContext

    assert smollm2_path().suffix == ".gguf"
    candidates = ["50", "181", "1", "2", "3"]
    output = recency_llm_graph.invoke({"user_id": "1", "candidates": candidates},
                                      context=BaselinesContext(llm="local", recency_llm_items=3))
    assert sorted(output["ranking"]) == sorted(candidates)
    usage = output["usage"][0]
    assert usage["calls"] >= 1 and usage["input_tokens"] > 50 and not usage["tokens_estimated"]
    # Greedy decoding under the candidates' enum grammar: SmolLM2's first answer is used as is.
    assert usage["source"] == "llm" and usage["calls"] == 1 and usage["model"] == "local"


def test_sqlite_llm_cache_replays_without_requests(tmp_path: Path) -> None:
    from langchain_core.globals import set_llm_cache

    from agents.backends import enable_llm_cache
    from graphs.baselines.llm import vanilla_llm_graph
    from llmsim.process import SimServer
    from state.context import Context

    request = {"user_id": "7", "candidates": ["50", "181", "1", "2", "3"]}
    enable_llm_cache(str(tmp_path / "llm-cache.sqlite"))
    try:
        with SimServer() as server:
            context = Context(llm="sim", base_url=server.base_url)
            first = vanilla_llm_graph.invoke(request, context=context)
            served = server.stats()["requests"]
            again = vanilla_llm_graph.invoke(request, context=context)
            assert served == 1 and server.stats()["requests"] == 1  # replayed from SQLite
            assert again["ranking"] == first["ranking"]
    finally:
        set_llm_cache(None)
