"""Per-agent output budgets (agents/output_budget.py): the table by hand, scaled by the entries an
answer lists, the cap each request is made with, and truncated answers counted per agent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agents.base import AgentTask, run_agent
from agents.output_budget import BUDGETS, budget_of, listed_entries, output_budget
from agents.ranking import ranking_json_schema, repair_ranking
from agents.validation import constrained_schema
from bench.protocol.spec import EvalCase
from bench.run.records import result_record
from bench.stats.method_summary import method_metrics
from recgraph.cli import main
from state.context import Context
from state.schemas import RankedList
from tests.fakes import ScriptedChatModel

DEFAULT = Context()


@pytest.mark.parametrize(
    ("agent", "entries", "tokens"),
    [
        ("rerank", 10, 1000),  # MemRec ReRank at the paper's N=10: the authors' 1000
        ("rerank", 20, 1800),  # 200 + 80 * 20
        ("rerank", 3, 512),  # 200 + 240 = 440, below the context's floor of 512
        ("synthesise", 0, 1000),  # Stage R: the authors' 1000
        ("propagate", 2, 1000),  # Stage W: at least the authors' 1000 (350 + 440 = 790)
        ("propagate", 16, 3870),  # 350 + 220 * 16: sixteen rewritten neighbour memories
        ("nli", 15, 1000),  # ARAG batched NLI: 100 + 60 * 15
        ("nli", 1, 512),  # per-item NLI: 160, floor 512
        ("item_ranker", 20, 1350),  # 150 + 60 * 20
        ("rank", 50, 1150),  # AMEM4Rec's ranker: 150 + 20 * 50
        ("evolve", 3, 690),  # 150 + 180 * 3
        ("vanilla_llm_ranker", 10, 512),  # an LLM baseline: 350, floor 512
        ("recency_llm_ranker", 30, 750),  # 150 + 20 * 30
        ("candidate_rank", 20, 660),  # ChainRec's own 60 + 30 * 20
        ("planner", 20, 512),  # not in the table: the context's max_output_tokens
    ],
)
def test_budget_per_agent_scaled_by_listed_entries(agent: str, entries: int, tokens: int) -> None:
    assert output_budget(agent, entries, DEFAULT) == tokens


def test_max_output_tokens_is_a_floor_per_agent_and_the_cap_when_flat() -> None:
    roomy = Context(max_output_tokens=2000)
    assert output_budget("rerank", 10, roomy) == 2000
    assert output_budget("rerank", 40, roomy) == 3400  # 200 + 80 * 40 is above the floor
    flat = Context(max_output_tokens=300, output_budget="flat")
    assert output_budget("rerank", 40, flat) == 300
    assert output_budget("planner", 0, flat) == 300


def test_every_budget_says_why_and_baseline_rankers_share_one() -> None:
    assert all(budget.why for budget in BUDGETS.values())
    assert budget_of("vanilla_llm_ranker") is budget_of("vanilla_rag_ranker")
    assert budget_of("item_ranker") is BUDGETS["item_ranker"]  # ARAG's, not the baselines'
    assert BUDGETS["propagate"].formula() == "max(1000, 350 + 220·n)"
    assert BUDGETS["synthesise"].formula() == "1000"


def test_listed_entries_is_the_longest_id_enum_of_the_schema() -> None:
    ids = [f"i{n}" for n in range(12)]
    assert listed_entries(ranking_json_schema(ids)) == 12
    nested = constrained_schema(
        RankedList, {"ranking[]": {"enum": ids[:3]}, "ranking": {"minItems": 3, "maxItems": 3}}
    )
    assert listed_entries(nested) == 3
    two = {"properties": {"a": {"enum": ["yes", "no"]}, "b": {"items": {"enum": ids[:5] + ids[:5]}}}}
    assert listed_entries(two) == 5  # distinct ids of the longest enum, not the small choice enum
    assert listed_entries(None) == 0


CANDIDATES = [f"c{n}" for n in range(15)]


def ranking_task() -> AgentTask[RankedList]:
    def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, CANDIDATES)
        return RankedList(ranking=ranking, reason=answer.reason), repairs

    return AgentTask(
        agent="vanilla_llm_ranker",
        role="rec",
        messages=[HumanMessage(content="rank the candidates")],
        schema=RankedList,
        validate=validate,
        fallback=lambda: RankedList(ranking=CANDIDATES, reason="fallback"),
        json_schema=ranking_json_schema(CANDIDATES),
    )


def test_each_request_is_made_with_its_agent_s_budget_and_a_truncated_answer_is_counted(
    monkeypatch,
) -> None:
    cut = AIMessage(
        content='{"ranking": ["c3", "c1"',
        response_metadata={"finish_reason": "length"},
        usage_metadata={"input_tokens": 80, "output_tokens": 40, "total_tokens": 120},
    )
    whole = json.dumps({"ranking": list(reversed(CANDIDATES)), "reason": "r"})
    model = ScriptedChatModel(script=[cut, whole])
    settings: list[tuple] = []

    def built(*given: object) -> ScriptedChatModel:
        settings.append(given)
        return model

    monkeypatch.setattr("agents.backends.chat_model_here", built)
    context = Context(llm="openai:gpt-4o-mini", llm_backoff=0.0, max_output_tokens=200)
    result = run_agent(ranking_task(), context)
    assert len(settings[0]) == 5  # (spec, url, timeout, temperature, rps): the budget is no model setting
    assert [seen["max_tokens"] for seen in model.kwargs_seen] == [150 + 20 * len(CANDIDATES)] * 2
    assert result.usage.errors == {"truncated": 1} and result.usage.source == "llm"

    case = EvalCase("u1", CANDIDATES[0], CANDIDATES)
    output = {"ranking": result.output.ranking, "usage": [result.usage.as_dict()]}
    record = result_record("vanilla_llm", case, output, 0.1)
    assert record["truncated"] == {"vanilla_llm_ranker": 1}
    clean = result_record("vanilla_llm", case, {"ranking": CANDIDATES, "usage": []}, 0.1)
    assert "truncated" not in clean
    summary = method_metrics([record, clean, {**record, "user_id": "u3"}])
    assert summary["truncated_by_agent"] == {"vanilla_llm_ranker": 2}
    assert summary["errors"] == {"truncated": 2}
    assert "truncated_answers" not in summary


def test_flat_budget_reaches_the_request(monkeypatch) -> None:
    settings: list[tuple] = []
    model = ScriptedChatModel(script=[json.dumps({"ranking": CANDIDATES, "reason": "r"})])
    monkeypatch.setattr("agents.backends.chat_model_here", lambda *given: settings.append(given) or model)
    run_agent(ranking_task(), Context(llm="openai:gpt-4o-mini", max_output_tokens=64, output_budget="flat"))
    assert model.kwargs_seen[0]["max_tokens"] == 64 and 64 not in settings[0]


def test_truncated_answers_from_the_simulator_reach_metrics_json(tmp_path: Path) -> None:
    out = tmp_path / "sim"
    args = ["bench", "--methods", "vanilla_llm", "--users", "6", "--llm", "sim", "--out", str(out)]
    assert main([*args, "--faults", "0.5", "--fault-kinds", "truncated", "--fallback-fail", "1"]) == 0
    row = json.loads((out / "metrics.json").read_text())["methods"]["vanilla_llm"]
    assert row["errors"]["truncated"] > 0 and "truncated_answers" not in row
    assert row["truncated_by_agent"] == {"vanilla_llm_ranker": row["errors"]["truncated"]}
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    per_user = [r.get("truncated", {}).get("vanilla_llm_ranker", 0) for r in lines]
    assert sum(per_user) == row["errors"]["truncated"]


def test_every_agent_in_the_code_has_a_budget_entry_or_is_named_as_taking_the_floor() -> None:
    """A new agent must be placed in the table (or here, on purpose, at the floor)."""
    import re

    root = Path(__file__).resolve().parents[1] / "agents"
    text = "\n".join(path.read_text(encoding="utf-8") for path in root.rglob("*.py"))
    names = set(re.findall(r'agent="([a-z_]+)"', text)) | set(re.findall(r'^AGENT = "([a-z_]+)"', text, re.M))
    at_the_floor = {"planner"}  # ChainRec's planner: a short plan (its tool agents size their own context)
    assert sorted(names - set(BUDGETS) - at_the_floor) == []
    assert sorted(set(BUDGETS) - names) == []  # no entry for an agent that no longer exists
