"""The agent pattern: validation, repair, retries that show the error, fallback, accounting."""

import asyncio
import json

import httpx
import openai
import pytest

from agents.base import AgentTask, InvalidAnswer, run_agent
from agents.ranking import left_out_order, repair_ranking
from agents.usage import critical_path_depth, price_of, summarise_usage
from graphs.baselines.llm import vanilla_llm_graph
from state.context import Context
from state.schemas import RankedList
from tests.fakes import ScriptedChatModel, install
from world.errors import RecgraphError

CANDIDATES = ["a", "b", "c", "d"]
FALLBACK = ["d", "c", "b", "a"]
CONTEXT = Context(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=2)


def task() -> AgentTask[RankedList]:
    from langchain_core.messages import HumanMessage, SystemMessage

    def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, CANDIDATES)
        return RankedList(ranking=ranking, reason=answer.reason), repairs

    messages = [SystemMessage(content="rank"), HumanMessage(content="Candidates:\n[a]\n[b]\n[c]\n[d]")]
    return AgentTask(
        agent="ranker",
        role="rec",
        messages=messages,
        schema=RankedList,
        validate=validate,
        fallback=lambda: RankedList(ranking=FALLBACK, reason="fallback"),
    )


def answer(ranking: list[str]) -> str:
    return json.dumps({"ranking": ranking, "reason": "because"})


def status_error(kind: type, status: int) -> Exception:
    response = httpx.Response(status, request=httpx.Request("POST", "http://llm.test/v1/chat/completions"))
    return kind(f"status {status}", response=response, body=None)


def test_repair_ranking() -> None:
    ranking, repairs = repair_ranking(["b", "ghost", "b", "a"], CANDIDATES)
    assert ranking == ["b", "a", *[i for i in left_out_order(CANDIDATES) if i in {"c", "d"}]]
    assert sorted(repairs) == ["duplicate_id", "missing_id", "missing_id", "unknown_id"]
    assert repair_ranking(["c", "a", "d", "b"], CANDIDATES) == (["c", "a", "d", "b"], [])
    with pytest.raises(InvalidAnswer, match="none of the ids"):
        repair_ranking(["x", "y"], CANDIDATES)


def test_valid_first_answer(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[answer(["c", "a", "d", "b"])]))
    result = run_agent(task(), CONTEXT)
    usage = result.usage
    assert result.output.ranking == ["c", "a", "d", "b"]
    assert (usage.source, usage.calls, usage.input_tokens, usage.output_tokens) == ("llm", 1, 100, 20)
    assert usage.cost_usd == pytest.approx(price_of("gpt-4o-mini", 100, 20))
    assert usage.cost_usd == pytest.approx((100 * 0.15 + 20 * 0.60) / 1e6)
    assert not usage.tokens_estimated and usage.repairs == 0


def test_malformed_answer_is_retried_with_the_error_shown(monkeypatch) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=['{"ranking": [oops', answer(["b", "ghost"])]))
    result = run_agent(task(), CONTEXT)
    usage = result.usage
    assert result.output.ranking == ["b", "d", "c", "a"]  # ghost dropped, rest in fallback order
    assert usage.errors == {"malformed_json": 1}
    assert usage.repairs == 1 and usage.repair_kinds == {"unknown_id": 1, "missing_id": 3}
    retry = model.received[1]  # user, the rejected answer as the assistant's turn, the note
    assert [m.type for m in retry] == ["system", "human", "ai", "human"]
    assert "rejected: the answer is not valid JSON" in str(retry[-1].content)
    assert "[a]" in str(retry[1].content)  # the task, candidates included, is still in the talk
    assert retry[-2].content == '{"ranking": [oops'


def test_transport_errors_are_retried_and_counted(monkeypatch) -> None:
    script = [status_error(openai.RateLimitError, 429), status_error(openai.InternalServerError, 500),
              answer(["a", "b", "c", "d"])]
    install(monkeypatch, ScriptedChatModel(script=script))
    usage = run_agent(task(), CONTEXT).usage
    assert usage.errors == {"http_429": 1, "http_500": 1}
    assert usage.attempts == 3 and usage.calls == 1 and usage.source == "llm"  # 429/500: no answer


def test_fallback_after_the_last_retry(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=["nope", '{"ranking": 3}', answer(["x"])]))
    result = run_agent(task(), CONTEXT)
    assert result.output.ranking == FALLBACK
    assert result.usage.source == "fallback" and result.usage.fallback
    assert result.usage.errors == {"malformed_json": 1, "schema_invalid": 1, "no_valid_ids": 1}
    summary = summarise_usage([result.usage.as_dict()])
    assert summary["fallbacks"] == 1 and summary["llm_attempts"] == 3 and summary["llm_answers"] == 1
    assert summary["llm_calls"] == 3  # unusable answers are still answers


def test_heuristic_backend_makes_no_call(monkeypatch) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=[]))
    result = run_agent(task(), Context(llm="heuristic"))
    assert result.usage.source == "heuristic" and result.usage.calls == 0
    assert not result.usage.fallback and model.received == []


def test_programming_errors_are_not_swallowed(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[KeyError("bug")]))
    with pytest.raises(KeyError):
        run_agent(task(), CONTEXT)


def test_refused_key_is_a_clear_error(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[status_error(openai.AuthenticationError, 401)]))
    with pytest.raises(RecgraphError, match="the LLM endpoint refused the request"):
        run_agent(task(), CONTEXT)


def test_tokens_are_estimated_when_not_reported(monkeypatch) -> None:
    from langchain_core.messages import AIMessage

    install(monkeypatch, ScriptedChatModel(script=[AIMessage(content=answer(["a", "b", "c", "d"]))]))
    usage = run_agent(task(), CONTEXT).usage
    assert usage.tokens_estimated and usage.input_tokens > 0 and usage.output_tokens > 0


def test_critical_path_depth() -> None:
    records = [{"step": 1, "calls": 1}, {"step": 2, "calls": 1}, {"step": 2, "calls": 3},
               {"step": 3, "calls": 0}]
    assert critical_path_depth(records) == 4


def test_graph_with_a_scripted_model_sync_and_async(monkeypatch) -> None:
    candidates = ["50", "181", "1", "2"]
    model = install(monkeypatch, ScriptedChatModel(script=[answer(["2", "1", "181", "50"])] * 2))
    request = {"user_id": "1", "candidates": candidates}
    output = vanilla_llm_graph.invoke(request, context=CONTEXT)
    assert output["ranking"] == ["2", "1", "181", "50"]
    assert output["trace"][-1]["role"] == "vanilla_llm_ranker"
    assert output["trace"][-1]["content"].startswith("[llm]")
    assert output["usage"][0]["calls"] == 1 and output["usage"][0]["step"] == 2
    prompt = str(model.received[0][-1].content)
    assert "Candidates (id in square brackets):" in prompt and '[181] "Return of the Jedi"' in prompt
    schema = model.kwargs_seen[0]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["ranking"]["items"]["enum"] == candidates
    again = asyncio.run(vanilla_llm_graph.ainvoke(request, context=CONTEXT))
    assert again["ranking"] == output["ranking"]
