"""The simulated server's fault injection, seen by a real client: each fault kind's symptom (SDK error,
broken JSON, truncation, damaged ids) and its count in the stats; which faults are eligible and how
the fault rate splits across kinds. (The `injection` fault: test_injection_sim.py.)"""

from __future__ import annotations

import time
from collections import Counter

import openai
import pytest

from llmsim.process import SimServer
from llmsim.server import FAULT_KINDS
from tests.llmsim.sim_helpers import IDS, PROMPT, SimpleRanking, chat, post


def _check_fault(kind: str, sim: SimServer) -> None:
    """Call the server once with a fault of `kind` forced and assert the client-side symptom."""
    llm = chat(sim, timeout=0.5 if kind == "timeout" else 5)
    structured = llm.with_structured_output(SimpleRanking, method="function_calling", include_raw=True)
    errors = {
        "http_429": openai.RateLimitError,
        "http_500": openai.InternalServerError,
        "timeout": openai.APITimeoutError,
    }
    if kind in errors:
        started = time.perf_counter()
        with pytest.raises(errors[kind]) as info:
            structured.invoke(PROMPT)
        if kind == "http_429":
            assert info.value.response.headers["retry-after"] == "0"
            assert info.value.body["code"] == "rate_limit_exceeded"
        if kind == "timeout":
            assert time.perf_counter() - started < 1.2
        return
    out = structured.invoke(PROMPT)
    raw = out["raw"]
    if kind == "malformed_json":
        assert out["parsed"] is None and raw.invalid_tool_calls and not raw.tool_calls
        with pytest.raises(ValueError, match="Invalid JSON"):  # json_schema: pydantic fails to parse
            llm.with_structured_output(SimpleRanking, method="json_schema").invoke(PROMPT)
        return
    if kind == "truncated":
        assert raw.response_metadata["finish_reason"] == "length" and out["parsed"] is None
        args = raw.invalid_tool_calls[0]["args"]
        assert args.startswith('{"ranking": [') and not args.endswith("}")
        return
    ranking = out["parsed"].ranking
    if kind == "unknown_ids":
        assert len(ranking) == len(IDS) and len([i for i in ranking if i not in IDS]) == 1
    elif kind == "duplicate_ids":
        assert len(ranking) == len(IDS) and len(set(ranking)) == len(IDS) - 1 and set(ranking) < set(IDS)
    else:
        assert ranking == IDS


# "injection": tests/llmsim/test_injection_sim.py
@pytest.mark.parametrize("kind", [k for k in FAULT_KINDS if k != "injection"])
def test_each_fault_kind_is_visible_to_the_client_and_counted(kind: str) -> None:
    with SimServer(fault_rate=1.0, faults=kind, timeout_delay=1.0, seed=1) as sim:
        _check_fault(kind, sim)
        stats = sim.stats()
        calls = 2 if kind == "malformed_json" else 1
        assert stats["faults"][kind] == calls and stats["requests"] == calls and stats["served_ok"] == 0
        assert sum(stats["faults"].values()) == calls


def test_id_faults_need_candidate_ids_and_rates_add_up() -> None:
    with SimServer(fault_rate=1.0, faults="echo,duplicate_ids,http_500") as sim:
        llm = chat(sim)
        for _ in range(4):  # no candidate ids in the prompt: only http_500 is eligible
            with pytest.raises(openai.InternalServerError):
                llm.invoke("Tell me something.")
        assert sim.stats()["faults"]["http_500"] == 4
    with SimServer(fault_rate=1.0, faults="echo") as sim:  # nothing eligible: served normally
        assert chat(sim).invoke("no ids here").content == "Simulated answer."
        assert sim.stats()["served_ok"] == 1
    with SimServer(fault_rate=0.5, faults="all", timeout_delay=0.05, seed=7) as sim:
        body = {"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
        statuses = Counter(post(sim, body)[0] for _ in range(40))
        stats = sim.stats()
        assert stats["requests"] == 40 == stats["served_ok"] + sum(stats["faults"].values())
        assert 5 <= stats["served_ok"] <= 35 and len([k for k, n in stats["faults"].items() if n]) >= 4
        assert statuses[429] == stats["faults"]["http_429"] and statuses[500] == stats["faults"]["http_500"]
