"""The connection circuit breaker: it trips at the limit naming the endpoint, counts across agents
until an answer, ignores timeouts and HTTP errors, and stops a bench against a closed port in one
line, keeping the users ranked so the same command resumes. Scripted models and a closed loopback
port only: no network."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import openai
import pytest

from agents.base import run_agent
from agents.breaker import EndpointUnreachable, consecutive_failures
from recgraph.cli import main
from tests.fail_loudly.scripted import (
    ENDPOINT,
    CandidateEcho,
    bench_args,
    context,
    metrics_of,
    refused,
    timed_out,
)
from tests.fakes import ScriptedChatModel, install
from tests.test_agent_loop import answer, status_error, task


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
