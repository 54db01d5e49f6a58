"""Planned requests before a paid run: each graph's declared calls match the agents it runs, and the
bench prints them before an OpenAI run (not for the heuristic backend)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from recgraph.cli import main
from tests.fail_loudly.scripted import CandidateEcho, bench_args
from tests.fakes import install


@pytest.mark.parametrize(
    ("method", "fields"),
    [
        ("vanilla_llm", {}),
        ("recency_llm", {}),
        ("vanilla_rag", {}),
        ("arag", {}),
        ("arag", {"arag_nli_mode": "per_item"}),
        ("arag_no_nli", {}),
        ("arag_no_nli_csa", {}),
    ],
)
def test_declared_calls_match_the_agents_a_graph_runs(method: str, fields: dict[str, Any]) -> None:
    from graphs.registry import METHODS, get_graph, hook, method_context

    candidates = ["50", "181", "1", "2", "100"]
    spec = METHODS[method]
    ctx = method_context(method, spec.context(llm="heuristic", **fields))
    plan = hook(method, "llm_calls")(ctx, len(candidates))
    output = get_graph(method).invoke({"user_id": "1", "candidates": candidates}, context=ctx)
    assert not plan.at_most and plan.per_user == len(output["usage"])  # one request per agent answer


def test_bench_prints_the_planned_requests_before_an_openai_run(tmp_path: Path, monkeypatch, capsys) -> None:
    install(monkeypatch, CandidateEcho(plan=["ok", "ok", "ok"]))
    assert main([*bench_args(tmp_path, users=3)[:-2], "--llm-retries", "2", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    head = "planned LLM requests: 3 before retries, up to 9 if every answer needs its 2 retries"
    assert head in printed and "vanilla_llm: 3 users × 1 = 3" in printed
    assert printed.index(head) < printed.index("wrote ")  # before the run, not in its report
    assert main(["bench", "--methods", "vanilla_llm", "--users", "3", "--out", str(tmp_path / "h")]) == 0
    assert "planned LLM requests" not in capsys.readouterr().out  # heuristic: nothing to pay for
