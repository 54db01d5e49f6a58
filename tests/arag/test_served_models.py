"""ARAG against served models: the loopback OpenAI-compatible simulator (critical path depth, async and
per-item runs, injected faults counted) and the bundled SmolLM2 end to end."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import pytest

from agents.usage import critical_path_depth
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from graphs.arag.graph import graph
from llmsim.process import SimServer
from state.arag.context import AragContext
from tests.arag.scripted import CANDIDATES, roles
from world.environment import get_environment


@pytest.fixture(scope="module")
def sim() -> Any:
    with SimServer() as server:
        yield server


def sim_cases(users: int) -> list[Any]:
    return plan_cases(get_environment("ml-100k"), Protocol(dataset="ml-100k", users=users, candidates=10))


def test_simulator_runs_have_critical_path_depth_three(sim: Any) -> None:
    context = AragContext(llm="sim", base_url=sim.base_url, llm_backoff=0.0)
    for case in sim_cases(3):
        output = graph.invoke(case.request("classic"), context=context)
        assert sorted(output["ranking"]) == sorted(case.candidates)
        assert {u["source"] for u in output["usage"]} == {"llm"}
        assert sum(u["calls"] for u in output["usage"]) == 4
        assert critical_path_depth(output["usage"]) == 3


def test_simulator_async_and_per_item(sim: Any) -> None:
    context = AragContext(llm="sim", base_url=sim.base_url, llm_backoff=0.0, arag_nli_mode="per_item")
    cases = sim_cases(3)

    async def run_all() -> list[dict]:
        return await asyncio.gather(*(graph.ainvoke(c.request("classic"), context=context) for c in cases))

    for case, output in zip(cases, asyncio.run(run_all()), strict=True):
        assert sorted(output["ranking"]) == sorted(case.candidates)
        assert sum(u["calls"] for u in output["usage"]) == 3 + len(case.candidates)
        assert critical_path_depth(output["usage"]) == 3


def test_simulator_faults_are_counted_as_injected() -> None:
    kinds = "http_500,malformed_json,unknown_ids,duplicate_ids"
    with SimServer(fault_rate=0.4, faults=kinds, seed=3) as server:
        context = AragContext(llm="sim", base_url=server.base_url, llm_backoff=0.0)
        records = []
        for case in sim_cases(6):
            output = graph.invoke(case.request("classic"), context=context)
            assert sorted(output["ranking"]) == sorted(case.candidates)
            records += output["usage"]
        injected = server.stats()["faults"]
    assert sum(injected.values()) > 3
    observed = defaultdict(int)
    for record in records:
        for kind in ("http_500", "malformed_json"):
            observed[kind] += record["errors"].get(kind, 0)
        observed["unknown_ids"] += record["repair_kinds"].get("unknown_id", 0)
        observed["duplicate_ids"] += record["repair_kinds"].get("duplicate_id", 0)
    for kind in kinds.split(","):
        assert observed[kind] == injected[kind], kind


def test_local_smollm2_runs_arag_end_to_end() -> None:
    candidates = CANDIDATES[:5]
    output = graph.invoke(
        {"user_id": "1", "candidates": candidates},
        context=AragContext(llm="local", arag_session_items=3, history_items=8),
    )
    assert sorted(output["ranking"]) == sorted(candidates)
    usage = {u["agent"]: u for u in output["usage"]}
    assert set(usage) == {"user_understanding", "nli", "context_summary", "item_ranker"}
    for agent in ("user_understanding", "nli", "item_ranker"):
        assert usage[agent]["model"] == "local" and usage[agent]["calls"] >= 1
        # Greedy decoding under the enum grammars: each first answer is used (repaired, not replaced).
        assert usage[agent]["source"] == "llm" and usage[agent]["calls"] == 1
        assert not usage[agent]["tokens_estimated"]
    assert roles(output)[-1] == "item_ranker"
