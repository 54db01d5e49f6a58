"""ARAG with a scripted model: the blackboard flow, batched and per-item NLI."""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

from agents.arag.signals import heuristic_nli
from graphs.arag.graph import graph
from tests.arag.scripted import CANDIDATES, LLM, REQUEST, roles, scripted_model
from tests.fakes import install
from world.environment import get_environment


def test_scripted_run_follows_the_blackboard(monkeypatch) -> None:
    model = install(monkeypatch, scripted_model())
    output = graph.invoke(REQUEST, context=LLM)
    got = roles(output)
    assert got[:2] == ["validate_input", "recall"] and set(got[2:4]) == {"user_understanding", "nli"}
    assert got[4:] == ["context_summary", "item_ranker"]
    assert output["ranking"] == ["3", "100", "2", "1", "181", "50"]  # duplicate dropped, "50" appended
    assert output["rationales"] == {"3": "funny"} and "scores" not in output  # the LLM ranked
    nli_post = json.loads(output["trace"][got.index("nli")]["content"])
    assert nli_post["scores"]["181"] == 10.0 and nli_post["source"] == "llm"
    usage = {u["agent"]: u for u in output["usage"]}
    assert usage["nli"]["repair_kinds"] == {"score_clipped": 1, "unknown_id": 1, "missing_id": 1}
    assert usage["item_ranker"]["repair_kinds"] == {
        "duplicate_id": 1,
        "missing_id": 1,
        "rationale_unknown_id": 1,
    }
    assert {u["source"] for u in output["usage"]} == {"llm"} and len(model.calls) == 4
    # The CSA read S_user and the NLI scores from the blackboard: only items with s ≥ θ (5) shown.
    [summary_prompt] = model.prompts_for("ContextSummary")
    assert "Loves space operas." in summary_prompt
    shown = [line.split("]")[0][1:] for line in summary_prompt.splitlines() if line.startswith("[")]
    env = get_environment("ml-100k")
    filled = heuristic_nli(env, env.history("1"), CANDIDATES, 5)["100"][0]  # "100" was left out
    assert set(shown) == {"181", "50", "2"} | ({"100"} if filled >= 5 else set())
    assert [i for i in shown if i != "100"] == ["181", "50", "2"]  # most salient first
    [ranker_prompt] = model.prompts_for("ExplainedRanking")
    assert "Sci-fi classics with a comic streak." in ranker_prompt and "Wants comedy." in ranker_prompt
    again = asyncio.run(graph.ainvoke(REQUEST, context=LLM))
    assert again["ranking"] == output["ranking"]


def test_scripted_per_item_nli(monkeypatch) -> None:
    model = install(monkeypatch, scripted_model())
    output = graph.invoke(REQUEST, context=replace(LLM, arag_nli_mode="per_item"))
    nli_posts = [m for m in output["trace"] if m["role"] == "nli"]
    assert len(nli_posts) == len(CANDIDATES)
    assert {m["score"] for m in nli_posts} == {9.0, 10.0, 2.0, 7.0, 1.0, 0.0}
    nli_usage = [u for u in output["usage"] if u["agent"] == "nli"]
    assert len(nli_usage) == len(CANDIDATES) and len({u["step"] for u in nli_usage}) == 1
    assert sum(u["repair_kinds"].get("score_clipped", 0) for u in nli_usage) == 1
    [summary_prompt] = model.prompts_for("ContextSummary")
    shown = {line.split("]")[0][1:] for line in summary_prompt.splitlines() if line.startswith("[")}
    assert shown == {"181", "50", "2"}
