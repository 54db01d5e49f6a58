"""Failing loudly: the connection circuit breaker, the fallback share and its thresholds, attempts
against answered calls, and `recommend` naming its fallbacks. Scripted models and a closed loopback
port only: no network."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from agents.base import run_agent
from agents.breaker import EndpointUnreachable, consecutive_failures, reset_breakers
from bench.stats.fallbacks import EXIT_TOO_MANY_FALLBACKS, check_fallbacks, fallback_share
from recgraph.cli import main
from state.context import Context
from tests.fakes import ScriptedChatModel, install
from tests.test_agent_loop import answer, status_error, task

ENDPOINT = "http://llm.test/v1"


@pytest.fixture(autouse=True)
def fresh_breakers() -> Iterator[None]:
    """Every test starts (and leaves) with no connection failure counted."""
    reset_breakers()
    yield
    reset_breakers()


@pytest.fixture(autouse=True)
def no_cost_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests script the answers of every backend (tests.fakes.install), so the cost probe's
    run under the loopback simulator before a hosted bench run would consume the script: here the
    probe measures nothing and the plan shows the declared calls (the probe has its own tests:
    tests/bench/cost/test_cost.py, tests/bench/report/test_report_plan.py)."""
    import bench.run.cost_probe

    monkeypatch.setattr(bench.run.cost_probe, "probe", lambda *args, **kwargs: {})


def refused() -> openai.APIConnectionError:
    """What the OpenAI client raises when nothing listens: a connection error caused by a refusal."""
    request = httpx.Request("POST", f"{ENDPOINT}/chat/completions")
    try:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        except httpx.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as error:
        return error


def timed_out() -> openai.APITimeoutError:
    """A request the server never answered in time."""
    return openai.APITimeoutError(request=httpx.Request("POST", f"{ENDPOINT}/chat/completions"))


def context(**fields: Any) -> Context:
    """An OpenAI-backend context at ENDPOINT with no backoff between retries."""
    return Context(
        **{"llm": "openai:gpt-4o-mini", "base_url": ENDPOINT, "llm_backoff": 0.0, "llm_retries": 2, **fields}
    )


# 1. The circuit breaker -----------------------------------------------------------------------


def test_breaker_trips_at_the_limit_and_names_the_endpoint(monkeypatch) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=[refused(), refused(), refused()]))
    with pytest.raises(EndpointUnreachable) as caught:
        run_agent(task(), context(max_connection_failures=3))
    message = str(caught.value)
    assert message.startswith(f"the LLM endpoint {ENDPOINT} is unreachable: 3 connection failures in a row")
    assert "Connection refused" in message and "\n" not in message
    assert len(model.received) == 3 and model.script == []


def test_breaker_counts_across_agents_until_an_answer(monkeypatch) -> None:
    ctx = context(max_connection_failures=4)
    install(monkeypatch, ScriptedChatModel(script=[refused(), refused(), answer(["a", "b", "c", "d"])]))
    assert run_agent(task(), ctx).usage.source == "llm"  # two refusals, then an answer: count restarts
    assert consecutive_failures(ENDPOINT) == 0
    install(monkeypatch, ScriptedChatModel(script=[refused(), refused(), refused(), refused()]))
    result = run_agent(task(), ctx)  # three in a row: below the limit, the agent falls back
    assert result.usage.source == "fallback" and result.usage.errors == {"connection": 3}
    assert consecutive_failures(ENDPOINT) == 3
    with pytest.raises(EndpointUnreachable, match="4 connection failures in a row"):
        run_agent(task(), ctx)  # the next agent's first refusal is the fourth


def test_interleaved_faults_do_not_trip(monkeypatch) -> None:
    # 429 and 500 come from a server that answered: they restart the count; a timeout leaves it.
    script = [refused(), refused(), status_error(openai.InternalServerError, 500),
              refused(), refused(), status_error(openai.RateLimitError, 429),
              refused(), timed_out(), refused()]  # fmt: skip
    install(monkeypatch, ScriptedChatModel(script=script))
    ctx = context(max_connection_failures=3)
    usages = [run_agent(task(), ctx).usage for _ in range(3)]
    assert [u.source for u in usages] == ["fallback"] * 3
    assert usages[0].errors == {"connection": 2, "http_500": 1}
    assert usages[2].errors == {"connection": 2, "timeout": 1}
    assert consecutive_failures(ENDPOINT) == 2  # refused, timeout (not counted), refused


def test_timeouts_and_http_errors_never_trip(monkeypatch) -> None:
    script = [timed_out(), status_error(openai.RateLimitError, 429),
              status_error(openai.InternalServerError, 500)]  # fmt: skip
    install(monkeypatch, ScriptedChatModel(script=script))
    usage = run_agent(task(), context(max_connection_failures=1)).usage
    assert usage.source == "fallback" and usage.attempts == 3 and usage.calls == 0


def test_zero_disables_the_breaker(monkeypatch) -> None:
    install(monkeypatch, ScriptedChatModel(script=[refused()] * 3))
    usage = run_agent(task(), context(max_connection_failures=0)).usage
    assert usage.source == "fallback" and usage.errors == {"connection": 3}


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_bench_against_a_closed_port_fails_with_one_line(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    args = ["bench", "--methods", "vanilla_llm,arag", "--llm", "openai:gpt-4o-mini", "--base-url", url,
            "--users", "12", "--out", str(tmp_path)]  # fmt: skip
    assert main(args) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(
        f"recgraph: error: the LLM endpoint {url} is unreachable: 3 connection failures in a row"
    )
    assert not (tmp_path / "metrics.json").exists()


def test_a_stopped_run_keeps_its_users_and_resumes(tmp_path: Path, monkeypatch, capsys) -> None:
    model = install(monkeypatch, CandidateEcho(plan=["ok", "ok", "refused", "refused", "refused"]))
    args = [*bench_args(tmp_path)[:-2], "--llm-retries", "2", "--out", str(tmp_path)]
    assert main(args) == 2
    assert "is unreachable: 3 connection failures in a row" in capsys.readouterr().err
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    ranked = [r["user_id"] for r in records if r.get("method") == "vanilla_llm"]
    assert len(ranked) == 2 and model.plan == []
    model = install(monkeypatch, CandidateEcho(plan=["ok", "ok"]))
    assert main(args) == 0  # the rerun asks only for the two users still missing
    assert model.plan == [] and len(model.received) == 2
    assert metrics_of(tmp_path)["methods"]["vanilla_llm"]["users"] == 4


# 2. The fallback share -------------------------------------------------------------------------


class CandidateEcho(BaseChatModel):
    """Answers each request by its plan: "ok" ranks the candidates the request's JSON schema lists,
    "bad" answers prose, "refused" raises a connection error."""

    plan: list[str]
    """One entry per request, in order."""
    received: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every request."""

    @property
    def _llm_type(self) -> str:
        return "candidate-echo"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        step = self.plan.pop(0)
        if step == "refused":
            raise refused()
        if step == "bad":
            text = "I would rank the first one first."
        else:
            schema = kwargs["extra_body"]["response_format"]["json_schema"]["schema"]
            text = json.dumps({"ranking": schema["properties"]["ranking"]["items"]["enum"], "reason": "r"})
        usage = {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def bench_args(out: Path, *extra: str, users: int = 4) -> list[str]:
    """A vanilla_llm bench on ml-100k, one user at a time, one attempt per agent."""
    return ["bench", "--methods", "vanilla_llm", "--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT,
            "--users", str(users), "--concurrency", "1", "--llm-retries", "0",
            "--out", str(out), *extra]  # fmt: skip


def metrics_of(out: Path) -> dict[str, Any]:
    return json.loads((out / "metrics.json").read_text())


def test_fallback_share_hand_computed(tmp_path: Path, monkeypatch, capsys) -> None:
    install(monkeypatch, CandidateEcho(plan=["ok", "bad", "ok", "ok"]))
    assert main(bench_args(tmp_path)) == 0
    document = metrics_of(tmp_path)
    row = document["methods"]["vanilla_llm"]
    # 4 users, one agent each, one attempt each; one prose answer -> one fallback of four answers.
    assert (row["llm_attempts"], row["llm_calls"], row["llm_answers"], row["fallbacks"]) == (4, 4, 4, 1)
    assert row["fallback_share"] == 0.25
    assert row["agents"]["vanilla_llm_ranker"]["llm_answers"] == 4
    assert document["fallbacks"]["warned"] == {"vanilla_llm": 0.25} and document["fallbacks"]["failed"] == {}
    printed = capsys.readouterr().out
    warning = "WARNING: fallbacks answered more than 5.0% of the LLM agent answers of vanilla_llm 25.0%"
    assert warning in printed
    report = (tmp_path / "report.md").read_text()
    assert "> **WARNING: fallbacks answered more than 5.0%" in report
    assert "| fallback_share |" in report and "| 25.0% |" in report


def test_attempts_and_answered_calls_differ_when_requests_fail(tmp_path: Path, monkeypatch) -> None:
    install(monkeypatch, CandidateEcho(plan=["refused", "ok", "ok", "ok", "ok"]))
    assert main([*bench_args(tmp_path, users=4)[:-2], "--llm-retries", "1", "--out", str(tmp_path)]) == 0
    row = metrics_of(tmp_path)["methods"]["vanilla_llm"]
    assert (row["llm_attempts"], row["llm_calls"], row["fallbacks"], row["fallback_share"]) == (5, 4, 0, 0.0)
    assert row["errors"] == {"connection": 1}


def test_fallback_share_above_the_failure_threshold_fails(tmp_path: Path, monkeypatch, capsys) -> None:
    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "fails")) == EXIT_TOO_MANY_FALLBACKS
    err = capsys.readouterr().err
    assert "recgraph: error: fallback share above 50.0% for vanilla_llm 75.0% (the run fails)" in err
    assert metrics_of(tmp_path / "fails")["fallbacks"]["failed"] == {"vanilla_llm": 0.75}  # outputs written

    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "allowed", "--allow-fallbacks")) == 0
    assert "allowed by --allow-fallbacks" in capsys.readouterr().out

    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "raised", "--fallback-fail", "0.8")) == 0


def test_heuristic_backend_neither_warns_nor_fails(tmp_path: Path, capsys) -> None:
    args = ["bench", "--methods", "vanilla_llm,popularity", "--users", "5", "--out", str(tmp_path)]
    assert main(args) == 0
    document = metrics_of(tmp_path)
    for name in ("vanilla_llm", "popularity"):
        row = document["methods"][name]
        assert row["fallback_share"] is None and row["llm_answers"] == 0 and row["fallbacks"] == 0
    assert document["fallbacks"]["warned"] == {} and "WARNING" not in capsys.readouterr().out


def test_check_fallbacks_thresholds_are_strict() -> None:
    methods = {"a": {"fallback_share": 0.05}, "b": {"fallback_share": 0.5}, "c": {"fallback_share": None}}
    check = check_fallbacks(methods, warn_above=0.05, fail_above=0.5)
    assert check.warned == {"b": 0.5} and check.failed == {} and not check.fails
    assert fallback_share({"fallbacks": 0, "llm_answers": 0}) is None


# 3. `recgraph recommend` names its fallbacks ---------------------------------------------------


def recommend_args(*extra: str) -> list[str]:
    return ["recommend", "--method", "vanilla_llm", "--user", "1", "--candidates", "5", *extra]


def test_recommend_says_when_its_ranking_is_a_fallback(monkeypatch, capsys) -> None:
    llm = ["--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT, "--llm-retries", "1"]
    install(monkeypatch, CandidateEcho(plan=["bad", "bad"]))
    assert main(recommend_args(*llm)) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "FALLBACK: 1 of 1 agent answers did not come from the LLM but from the agents' deterministic "
        "fallbacks after every attempt failed: vanilla_llm_ranker (malformed_json ×2)." in printed
    )
    assert "The ranking itself is vanilla_llm_ranker's fallback ordering, not the LLM's." in printed

    install(monkeypatch, CandidateEcho(plan=["bad", "ok"]))
    assert main(recommend_args(*llm)) == 0
    assert "FALLBACK" not in capsys.readouterr().out

    assert main(recommend_args()) == 0  # heuristic: the title says no LLM; nothing failed
    assert "FALLBACK" not in capsys.readouterr().out


def test_fallback_notice_names_only_the_agents_that_fell_back() -> None:
    from recgraph.recommend_notes import fallback_notice

    usage = [
        {"agent": "user_understanding", "source": "fallback", "errors": {"timeout": 3}},
        {"agent": "nli", "source": "llm", "errors": {}},
        {"agent": "item_ranker", "source": "llm", "errors": {"http_429": 1}},
    ]
    notice = fallback_notice(usage)
    assert notice is not None and notice.startswith("FALLBACK: 1 of 3 agent answers")
    assert "user_understanding (timeout ×3)" in notice and "ranking itself" not in notice
    assert fallback_notice([{**row, "source": "heuristic"} for row in usage]) is None


# 4. Planned requests before a paid run ------------------------------------------------------------


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


# 5. Stopping concurrent work cleanly ---------------------------------------------------------------


def test_run_concurrently_stops_every_worker_at_the_first_failure() -> None:
    import asyncio

    from graphs.concurrency import run_concurrently

    started: list[int] = []
    finished: list[int] = []
    cancelled: list[int] = []

    async def work(item: int) -> int:
        started.append(item)
        if item == 2:
            raise EndpointUnreachable("down")
        try:
            await asyncio.sleep(0 if item == 0 else 5)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise
        return item

    with pytest.raises(EndpointUnreachable, match="down"):
        asyncio.run(run_concurrently(range(10), work, finished.append, concurrency=2))
    assert finished == [0]  # recorded before the failure, kept
    assert started == [0, 1, 2] and cancelled == [1]  # item 1 was in flight: cancelled and awaited


def test_run_concurrently_bounds_the_items_in_flight() -> None:
    import asyncio

    from graphs.concurrency import run_concurrently

    in_flight, peak, results = 0, 0, []

    async def work(item: int) -> int:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.001)
        in_flight -= 1
        return item * 2

    asyncio.run(run_concurrently(range(20), work, results.append, concurrency=3))
    assert sorted(results) == [2 * i for i in range(20)] and peak == 3
