"""`chainrec_llm_planner` (the paper's DeepSeek-R1 planner row) is marked not run when no LLM answers:
its numbers would be the rule planner's, so metrics.json says why instead (graphs/chainrec/llm_planner.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from graphs.chainrec.llm_planner import NO_LLM_REASON, mark_backend
from graphs.hooks import PrepareRequest
from recgraph.cli import main
from state.chainrec.context import ChainRecContext


def request(context: ChainRecContext, tmp_path: Path) -> PrepareRequest:
    """A prepare request of `chainrec_llm_planner` with `context`."""
    protocol = {"candidates": 4, "seed": 0, "scenario": "classic", "users": 1, "llm": context.llm}
    return PrepareRequest("chainrec_llm_planner", ["u1"], "classic", protocol, tmp_path, 1, context)


def test_the_hook_marks_only_a_planner_without_a_model(tmp_path: Path) -> None:
    context = ChainRecContext(chainrec_planner="llm")
    assert mark_backend(request(context, tmp_path)).metrics == {"not_run_reason": NO_LLM_REASON}
    with_model = replace(context, llm="sim")
    assert mark_backend(request(with_model, tmp_path)).metrics == {}
    planner_only = replace(context, planner_model="sim")  # the planner role has a model
    assert mark_backend(request(planner_only, tmp_path)).metrics == {}


def test_a_heuristic_bench_run_says_the_llm_planner_row_was_not_run(books: str, tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["bench", "--dataset", books, "--methods", "chainrec,chainrec_llm_planner", "--candidates", "4"]
    assert main([*args, "--users", "2", "--out", str(out)]) == 0
    methods = json.loads((out / "metrics.json").read_text())["methods"]
    assert methods["chainrec_llm_planner"]["not_run_reason"] == NO_LLM_REASON
    assert "not_run_reason" not in methods["chainrec"]
