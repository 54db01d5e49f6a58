"""Planned beside measured in every bench report with an LLM backend (bench/report/call_plan.py): the
block in metrics.json and report.md, by hand; none under the heuristic backend; a real `recgraph
bench --llm sim` run's report shows the declared and measured calls."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.cost.measured import Usage
from bench.cost.planned_calls import PlannedCalls
from bench.report import outputs as report
from bench.report.call_plan import plan_block, plan_markdown
from graphs.hooks import CallPlan
from recgraph.cli import main

PROTOCOL = {"candidates": 10, "seed": 0, "scenario": "classic", "users": 4, "llm": "openai:gpt-4o-mini"}


def methods() -> dict[str, dict]:
    """Two LLM methods (one with a prepare block) and a classic one, as metrics.json records them."""
    training = {"llm_calls": 6, "input_tokens": 3000, "output_tokens": 300}
    return {
        "amem4rec": {
            "users": 4, "llm_calls": 4, "input_tokens": 2000, "output_tokens": 200, "est_cost_usd": 0.01,
            "call_plan": {"per_user": 1, "at_most": False, "note": ""}, "training": training,
        },
        "vanilla_llm": {
            "users": 4, "llm_calls": 4, "input_tokens": 1000, "output_tokens": 100, "est_cost_usd": 0.002,
            "call_plan": {"per_user": 1, "at_most": False, "note": ""},
        },
        "bpr": {"users": 4, "call_plan": {"per_user": 0, "at_most": False, "note": "classic method: no LLM"}},
    }  # fmt: skip


def planned() -> list[PlannedCalls]:
    """The plan printed before the run: AMEM4Rec probed (10 calls, 4,000 + 400 tokens), vanilla_llm
    declared only."""
    return [
        PlannedCalls("amem4rec", 4, CallPlan(1), Usage(10, 4000, 400)),
        PlannedCalls("vanilla_llm", 4, CallPlan(1), None),
    ]


def test_block_by_hand() -> None:
    block = plan_block(methods(), PROTOCOL["llm"], planned())
    assert block is not None and set(block) == {"amem4rec", "vanilla_llm"}  # classic methods left out
    amem = block["amem4rec"]
    assert amem["declared_calls"] == 4
    assert amem["measured"] == {"calls": 10, "input_tokens": 5000, "output_tokens": 500, "usd": 0.01}
    # gpt-4o-mini: (4000 × 0.15 + 400 × 0.60) / 1e6
    assert amem["planned"]["usd"] == pytest.approx(0.00084)
    assert amem["tokens_measured_over_planned"] == pytest.approx(5500 / 4400)
    vanilla = block["vanilla_llm"]
    assert vanilla["planned"] is None and vanilla["tokens_measured_over_planned"] is None
    assert vanilla["measured"]["calls"] == 4
    assert plan_block(methods(), "heuristic", planned()) is None


def test_markdown_rows() -> None:
    text = plan_markdown(plan_block(methods(), PROTOCOL["llm"], planned()))
    assert "| amem4rec | 4 | 4 | 10 | 10 | 4,000 | 5,000 | 400 | 500 | $0.0008 | $0.0100 | 1.250 |" in text
    assert "| vanilla_llm | 4 | 4 | — | 4 | — | 1,000 | — | 100 | — | $0.0020 | — |" in text
    assert plan_markdown(None) == ""


def test_reports_carry_the_block(tmp_path: Path) -> None:
    document = json.loads(
        report.write_metrics(tmp_path, "ml-100k", PROTOCOL, methods(), planned=planned()).read_text()
    )
    assert document["planned_vs_measured"]["amem4rec"]["planned"]["calls"] == 10
    text = report.write_report_md(tmp_path, "ml-100k", PROTOCOL, methods(), planned=planned()).read_text()
    assert "### LLM calls and tokens: planned beside measured" in text and "| amem4rec | 4 |" in text
    heuristic = {**PROTOCOL, "llm": "heuristic"}
    assert (
        "planned beside measured"
        not in report.write_report_md(tmp_path, "x", heuristic, methods()).read_text()
    )
    assert "planned_vs_measured" not in report.write_metrics(tmp_path, "x", heuristic, methods()).read_text()


def test_sim_bench_report_shows_declared_beside_measured(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    dataset = str(shared_data / "CDs-100-user-dense")
    argv = ["bench", "--dataset", dataset, "--methods", "vanilla_llm,bpr", "--users", "3", "--llm", "sim"]
    assert main([*argv, "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    block = metrics["planned_vs_measured"]
    assert set(block) == {"vanilla_llm"}
    measured = metrics["methods"]["vanilla_llm"]
    assert block["vanilla_llm"]["declared_calls"] == 3  # 3 users × 1 request
    assert block["vanilla_llm"]["measured"]["calls"] == measured["llm_calls"] > 0
    assert block["vanilla_llm"]["measured"]["input_tokens"] == measured["input_tokens"] > 0
    row = f"| vanilla_llm | 3 | 3 | — | {measured['llm_calls']:,.0f} | — | {measured['input_tokens']:,.0f} |"
    assert row in (out / "report.md").read_text()


def test_hosted_bench_report_shows_planned_beside_measured(shared_data: Path, tmp_path: Path) -> None:
    """A hosted model (an OpenAI-compatible endpoint: here the loopback simulator) gets its plan probed
    before the run, and report.md puts it beside what the run measured."""
    from llmsim.process import SimServer

    out = tmp_path / "hosted"
    dataset = str(shared_data / "CDs-100-user-dense")
    argv = ["bench", "--dataset", dataset, "--methods", "vanilla_llm", "--users", "3"]
    with SimServer(seed=0) as server:
        argv += ["--llm", "openai:gpt-4o-mini", "--base-url", server.base_url, "--out", str(out)]
        assert main(argv) == 0
    row = json.loads((out / "metrics.json").read_text())["planned_vs_measured"]["vanilla_llm"]
    planned, measured = row["planned"], row["measured"]
    assert planned["calls"] == measured["calls"] == 3
    assert measured["input_tokens"] == pytest.approx(planned["input_tokens"], rel=0.15)  # same prompts
    assert planned["output_tokens"] >= measured["output_tokens"]  # answers planned at their budgets
    assert planned["usd"] == pytest.approx(
        (planned["input_tokens"] * 0.15 + planned["output_tokens"] * 0.6) / 1e6
    )
    text = (out / "report.md").read_text()
    assert (
        f"| vanilla_llm | 3 | 3 | 3 | 3 | {planned['input_tokens']:,.0f} | {measured['input_tokens']:,.0f} |"
        in text
    )
