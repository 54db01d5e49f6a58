"""Retries after a 429 (or 503) wait as long as the provider's headers say, capped; else the backoff."""

from __future__ import annotations

import types
from email.utils import formatdate

import httpx
import openai
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from agents import base
from agents.base import AgentTask, run_agent
from agents.ranking import repair_ranking
from agents.retry_after import MAX_RETRY_WAIT, header_wait, parse_duration, retry_wait
from llmsim.faults import parse_retry_headers
from llmsim.process import SimServer
from state.context import Context
from state.schemas import RankedList

NOW = 1_700_000_000.0


def status_error(kind: type, status: int, headers: dict[str, str]) -> Exception:
    """An SDK status error whose response carries `headers`."""
    request = httpx.Request("POST", "http://llm.test/v1/chat/completions")
    return kind(
        f"status {status}", response=httpx.Response(status, headers=headers, request=request), body=None
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1h2m3.5s", 3723.5), ("0.5", 0.5), ("250us", 0.00025)],
)
def test_go_durations_parse(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "1x", "s", "1s later", "nan"])
def test_non_durations_are_none(text: str) -> None:
    assert parse_duration(text) is None


def test_retry_after_in_seconds_ms_or_as_a_date() -> None:
    assert header_wait({"Retry-After": "7"}) == 7.0
    assert header_wait({"retry-after": "7", "retry-after-ms": "1500"}) == 1.5  # ms is the finer one
    assert header_wait({"Retry-After": formatdate(NOW + 30, usegmt=True)}, now=NOW) == 30.0
    assert header_wait({"Retry-After": formatdate(NOW - 30, usegmt=True)}, now=NOW) == 0.0  # already past
    assert header_wait({"retry-after": "whenever"}) is None
    assert header_wait({}) is None


def test_the_reset_of_the_exhausted_limit_is_the_wait() -> None:
    resets = {"x-ratelimit-reset-requests": "120ms", "x-ratelimit-reset-tokens": "6m0s"}
    requests_hit = {**resets, "x-ratelimit-remaining-requests": "0", "x-ratelimit-remaining-tokens": "9000"}
    tokens_hit = {**resets, "x-ratelimit-remaining-requests": "41", "x-ratelimit-remaining-tokens": "0"}
    assert header_wait(requests_hit) == pytest.approx(0.12)
    assert header_wait(tokens_hit) == 360.0
    assert header_wait(resets) == 360.0  # which limit was hit is unknown: wait until both reset
    assert header_wait({**requests_hit, "retry-after": "2"}) == 2.0  # Retry-After says it outright


def test_only_429_and_503_headers_set_the_wait_and_the_cap_holds() -> None:
    slow = {"retry-after": "600"}
    assert retry_wait(status_error(openai.RateLimitError, 429, {"retry-after": "3"}), 2, 0.5) == 3.0
    assert retry_wait(status_error(openai.RateLimitError, 429, slow), 1, 0.5) == MAX_RETRY_WAIT
    assert retry_wait(status_error(openai.InternalServerError, 503, {"retry-after-ms": "40"}), 1, 0.5) == 0.04
    assert retry_wait(status_error(openai.InternalServerError, 500, {"retry-after": "3"}), 2, 0.5) == 1.0
    assert retry_wait(status_error(openai.RateLimitError, 429, {}), 3, 0.5) == 2.0  # no header: backoff
    assert retry_wait(None, 2, 0.25) == 0.5  # an unusable answer: backoff


def test_bad_simulator_retry_headers_are_refused() -> None:
    assert parse_retry_headers("") == {"retry-after": "0"}
    with pytest.raises(ValueError, match="not JSON"):
        parse_retry_headers("{retry")
    with pytest.raises(ValueError, match="object of strings"):
        parse_retry_headers('{"retry-after": 2}')


def ranking_task() -> AgentTask[RankedList]:
    """A ranking agent over four candidates."""
    ids, fallback = ["a", "b", "c", "d"], ["d", "c", "b", "a"]

    def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, ids)
        return RankedList(ranking=ranking, reason=answer.reason), repairs

    return AgentTask(
        agent="ranker",
        role="rec",
        messages=[SystemMessage(content="rank"), HumanMessage(content="Candidates:\n[a]\n[b]\n[c]\n[d]")],
        schema=RankedList,
        validate=validate,
        fallback=lambda: RankedList(ranking=fallback, reason="fallback"),
    )


OPENAI_429 = {
    "x-ratelimit-limit-requests": "500",
    "x-ratelimit-remaining-requests": "0",
    "x-ratelimit-reset-requests": "120ms",
    "x-ratelimit-remaining-tokens": "9000",
    "x-ratelimit-reset-tokens": "6m0s",
}


@pytest.mark.parametrize(
    ("headers", "waits"),
    [
        (OPENAI_429, [0.12, 0.12]),
        ({"retry-after": "7", "retry-after-ms": "1500"}, [1.5, 1.5]),
        ({"x-ratelimit-reset-tokens": "6m0s"}, [MAX_RETRY_WAIT, MAX_RETRY_WAIT]),
    ],
)
def test_the_agent_loop_waits_what_the_simulators_429_says(
    headers: dict[str, str], waits: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[float] = []
    # Only the agent loop's clock is replaced: the waits are recorded, not slept.
    monkeypatch.setattr(
        base, "time", types.SimpleNamespace(perf_counter=base.time.perf_counter, sleep=slept.append)
    )
    with SimServer(fault_rate=1.0, faults="http_429", retry_headers=headers) as sim:
        context = Context(llm="sim", base_url=sim.base_url, llm_retries=2, llm_backoff=0.5)
        result = run_agent(ranking_task(), context)
        stats = sim.stats()
    assert slept == pytest.approx(waits)
    assert result.usage.source == "fallback" and result.usage.errors == {"http_429": 3}
    assert stats["faults"]["http_429"] == 3
