"""The quality–cost picture: the Pareto frontier by hand, metrics.json's `quality_cost` block (planned
calls with the heuristic backend, measured calls and tokens otherwise), report.md's table, the console
line and report.png's panels, and a tiny `recgraph bench` run of each kind."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.report import console as report_console
from bench.report import outputs as report
from bench.report.png import report_figure
from bench.report.quality_cost import (
    CALLS_AXIS,
    MEASURED,
    PLANNED,
    frontier,
    frontier_line,
    pareto_front,
    quality_cost,
    quality_cost_markdown,
)

PROTOCOL = {"candidates": 10, "seed": 0, "scenario": "classic", "users": 4, "llm": "heuristic"}


def row(ndcg: float, plan: int | None, *, at_most: bool = False, calls: int = 0, tokens: int = 0) -> dict:
    """A metrics.json method row over 4 users: its ndcg@5, call plan and measured usage."""
    call_plan = None if plan is None else {"per_user": plan, "at_most": at_most, "note": ""}
    usage = {
        "llm_calls": calls,
        "input_tokens": tokens,
        "output_tokens": tokens // 4,
        "tokens_estimated": False,
    }
    return {"ndcg@5": ndcg, "users": 4, **usage, "call_plan": call_plan}


@pytest.mark.parametrize(
    ("points", "front"),
    [
        ({"only": (3.0, 0.2)}, {"only"}),  # a single method is its own frontier
        ({"a": (0.0, 0.3), "b": (1.0, 0.5), "c": (2.0, 0.4)}, {"a", "b"}),  # c: costlier and worse than b
        ({"a": (1.0, 0.5), "b": (1.0, 0.5)}, {"a", "b"}),  # equal points: neither strictly dominates
        ({"a": (1.0, 0.5), "b": (1.0, 0.4)}, {"a"}),  # same cost, worse
        ({"a": (1.0, 0.5), "b": (2.0, 0.5)}, {"a"}),  # same quality, costlier
        ({"a": (0.0, 0.1), "b": (1.0, 0.2), "c": (2.0, 0.3)}, {"a", "b", "c"}),  # each buys quality
        ({"a": (0.0, 0.5), "b": (0.0, 0.5), "c": (3.0, 0.5), "d": (2.0, 0.6)}, {"a", "b", "d"}),
        ({}, set()),
    ],
)
def test_pareto_front_matches_hand_computed_cases(points: dict, front: set[str]) -> None:
    assert pareto_front(points) == front


def test_heuristic_runs_plot_planned_calls_and_no_tokens() -> None:
    methods = {
        "popularity": row(0.30, 0),
        "vanilla_llm": row(0.30, 1),  # same quality, costlier: dominated
        "arag": row(0.35, 4),
        "chainrec": row(0.34, 8, at_most=True),
        "mystery": row(0.90, None),  # an LLM method without a declared plan: cost unknown
    }
    block = quality_cost(methods, "heuristic")
    assert block["cost_source"] == PLANNED and block["calls_axis"] == CALLS_AXIS[PLANNED]
    assert "calls an LLM run would make" in block["calls_axis"] and "not measured" in block["calls_axis"]
    assert block["tokens_axis"] is None and block["quality"] == "ndcg@5"
    rows = block["methods"]
    assert rows["arag"] == {"ndcg@5": 0.35, "llm_calls_per_user": 4.0, "calls_at_most": False,
                            "tokens_per_user": None, "pareto": True, "pareto_tokens": None}  # fmt: skip
    assert rows["chainrec"]["calls_at_most"] and rows["chainrec"]["pareto"] is False
    assert rows["vanilla_llm"]["pareto"] is False and rows["popularity"]["pareto"] is True
    assert rows["mystery"]["llm_calls_per_user"] is None and rows["mystery"]["pareto"] is None
    assert frontier(block) == ["popularity", "arag"]
    assert frontier_line(block).endswith("not measured): popularity, arag")


STAGE_W = {"llm_calls": 4, "input_tokens": 400, "output_tokens": 100}
"""MemRec's Stage W totals over the 4 users (one warm-up write each)."""


def test_measured_runs_count_answered_calls_tokens_and_stage_w_per_user() -> None:
    methods = {
        "popularity": row(0.30, 0),
        "vanilla_llm": row(0.32, 1, calls=4, tokens=4000),  # 1 call, 1,250 tokens per user
        "memrec": {**row(0.40, 3, calls=10, tokens=8000), "stage_w": STAGE_W},
    }
    methods["memrec"]["tokens_estimated"] = True
    block = quality_cost(methods, "sim")
    assert block["cost_source"] == MEASURED and block["tokens_axis"] and block["tokens_estimated"]
    memrec = block["methods"]["memrec"]
    assert memrec["llm_calls_per_user"] == 3.5  # (10 ranking + 4 Stage W) / 4 users; the plan (3) unused
    assert memrec["tokens_per_user"] == (8000 + 2000 + 400 + 100) / 4
    assert block["methods"]["vanilla_llm"]["tokens_per_user"] == 1250.0
    assert all(r["pareto"] and r["pareto_tokens"] for r in block["methods"].values())
    methods["vanilla_llm"]["ndcg@5"] = 0.29  # now worse than the free popularity
    assert quality_cost(methods, "sim")["methods"]["vanilla_llm"]["pareto"] is False


def test_report_md_table_and_console_line(tmp_path: Path) -> None:
    from rich.console import Console

    methods = {"popularity": row(0.30, 0), "chainrec": row(0.34, 8, at_most=True), "vanilla_llm": row(0.2, 1)}
    table = quality_cost_markdown(quality_cost(methods, "heuristic"))
    assert "| chainrec | 0.3400 | ≤8 | ✓ |" in table and "| vanilla_llm | 0.2000 | 1 |  |" in table
    assert "tokens/user" not in table
    text = report.write_report_md(tmp_path, "ml-100k", PROTOCOL, methods).read_text()
    assert "Quality vs cost (planned)" in text and "| popularity | 0.3000 | 0 | ✓ |" in text
    console = Console(record=True, width=300)
    console.print(report_console.rich_report("ml-100k", PROTOCOL, methods))
    assert "Pareto frontier, ndcg@5 vs planned calls per user (heuristic backend" in console.export_text()
    document = json.loads(report.write_metrics(tmp_path, "ml-100k", PROTOCOL, methods).read_text())
    assert document["quality_cost"]["methods"]["chainrec"]["pareto"] is True


def test_report_png_has_the_quality_cost_panels() -> None:
    methods = {"popularity": row(0.30, 0), "vanilla_llm": row(0.32, 1, calls=4, tokens=4000)}
    titles = _titles(report_figure("ml-100k", PROTOCOL, methods))
    assert len(titles) == 2 and titles[1].startswith(f"ndcg@5 vs {CALLS_AXIS[PLANNED]} red, *: Pareto")
    measured = report_figure("ml-100k", {**PROTOCOL, "llm": "sim"}, methods)
    titles = _titles(measured)
    assert titles[1].startswith(f"ndcg@5 vs {CALLS_AXIS[MEASURED]} red, *: Pareto")
    assert titles[2].startswith("ndcg@5 vs prompt + completion tokens per user (measured) red, *")
    assert [axes.get_xlabel() for axes in measured.axes][1:] == [
        "LLM requests answered per user",
        "prompt + completion tokens per user",
    ]


def _titles(figure: Any) -> list[str]:
    """Each panel's title, its wrapped lines joined again."""
    return [" ".join(axes.get_title().split("\n")) for axes in figure.axes]


@pytest.mark.parametrize("llm", ["heuristic", "sim"])
def test_bench_writes_the_quality_cost_block(tiny_dataset_dir: Path, tmp_path: Path, llm: str) -> None:
    from recgraph.cli import main

    out = tmp_path / "out"
    args = ["bench", "--methods", "popularity,vanilla_llm", "--dataset", str(tiny_dataset_dir),
            "--users", "3", "--candidates", "2", "--llm", llm, "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    document = json.loads((out / "metrics.json").read_text())
    assert document["methods"]["vanilla_llm"]["call_plan"] == {"per_user": 1, "at_most": False, "note": ""}
    assert document["methods"]["popularity"]["call_plan"]["per_user"] == 0
    block = document["quality_cost"]
    assert set(block) == {"quality", "cost_source", "calls_axis", "tokens_axis", "tokens_estimated", "pareto",
                          "methods"}  # fmt: skip
    rows = block["methods"]
    assert set(rows) == {"popularity", "vanilla_llm"}
    for name, entry in rows.items():
        assert entry["ndcg@5"] == document["methods"][name]["ndcg@5"]
        assert isinstance(entry["pareto"], bool)
    assert rows["vanilla_llm"]["llm_calls_per_user"] == 1.0  # planned, or the simulator answering each once
    assert rows["popularity"]["llm_calls_per_user"] == 0.0 and rows["popularity"]["pareto"]
    if llm == "heuristic":
        assert block["cost_source"] == PLANNED and rows["vanilla_llm"]["tokens_per_user"] is None
        assert document["methods"]["vanilla_llm"]["llm_calls"] == 0  # nothing measured: the plan is plotted
    else:
        assert block["cost_source"] == MEASURED and rows["vanilla_llm"]["tokens_per_user"] > 0
        assert isinstance(rows["vanilla_llm"]["pareto_tokens"], bool)
    assert f"Quality vs cost ({block['cost_source']})" in (out / "report.md").read_text()


NEW_BASELINES = {"sasrec": 0, "gru4rec": 0, "lightgcn": 0, "llmrank_sequential": 1, "llmrank_recency": 1,
                 "llmrank_icl": 1}  # fmt: skip
"""Issue 37's baselines -> planned LLM calls per user (the trained ones ask no model; each LLMRank
variant ranks in one call)."""


def test_new_baselines_sit_on_the_calls_axis_with_their_plans() -> None:
    """Their call plans come from the registry (no hand-written rows): the trained baselines at 0
    calls, LLMRank at 1, AgentCF with a declared plan; in the panel the best 0-call method is on the
    frontier and an LLM ranker it beats is not."""
    from bench.cost.planned_calls import call_plan_entry
    from graphs.registry import method_context
    from state.context import Context

    plans = {}
    for name in [*NEW_BASELINES, "agentcf"]:
        plans[name] = call_plan_entry(name, method_context(name, Context(dataset="ml-100k")), 10)
    for name, per_user in NEW_BASELINES.items():
        assert plans[name] is not None and plans[name]["per_user"] == per_user and not plans[name]["at_most"]
    assert plans["agentcf"] is not None and plans["agentcf"]["per_user"] >= 1
    quality = {"sasrec": 0.72, "gru4rec": 0.73, "lightgcn": 0.68, "llmrank_sequential": 0.43,
               "llmrank_recency": 0.46, "llmrank_icl": 0.43, "agentcf": 0.50}  # fmt: skip
    methods = {name: {"ndcg@5": quality[name], "users": 4, "call_plan": plans[name]} for name in quality}
    rows = quality_cost(methods, "heuristic")["methods"]
    assert set(rows) == set(quality)
    assert all(rows[name]["llm_calls_per_user"] == 0.0 for name in ("sasrec", "gru4rec", "lightgcn"))
    assert {name for name, entry in rows.items() if entry["pareto"]} == {"gru4rec"}  # 0 calls, best
