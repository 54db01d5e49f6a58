"""ARAG: topology (parallel UUA ∥ NLI), blackboard flow with a scripted model, the simulator,
the local SmolLM2, and the heuristic fallbacks and ablations."""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from agents.arag.signals import fused_scores, heuristic_nli, session_similarity
from agents.usage import critical_path_depth
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from graphs.arag.graph import arag_no_nli_csa_graph, arag_no_nli_graph, build_arag, graph
from llmsim.process import SimServer
from state.arag.context import AragContext
from tests.fakes import SchemaRoutedModel, install
from world.environment import get_environment

CANDIDATES = ["50", "181", "1", "2", "3", "100"]
REQUEST = {"user_id": "1", "candidates": CANDIDATES}
LLM = AragContext(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=1)
PARALLEL = {"user_understanding", "nli", "nli_item"}


def task_steps(compiled: Any, request: dict, context: AragContext) -> dict[str, list[int]]:
    """Node name -> the supersteps its tasks ran in."""
    steps: dict[str, list[int]] = defaultdict(list)
    for event in compiled.stream(request, context=context, stream_mode="debug"):
        if event["type"] == "task":
            steps[event["payload"]["name"]].append(event["step"])
    return steps


def roles(output: dict) -> list[str]:
    return [message["role"] for message in output["trace"]]


def paths_to_end(compiled: Any) -> list[list[str]]:
    """Every START -> END path of the drawn graph (it is acyclic)."""
    drawn = compiled.get_graph()
    nexts: dict[str, list[str]] = defaultdict(list)
    for edge in drawn.edges:
        nexts[edge.source].append(edge.target)
    found: list[list[str]] = []

    def walk(path: list[str]) -> None:
        if path[-1] == "__end__":
            found.append(path)
        for target in nexts[path[-1]]:
            walk([*path, target])

    walk(["__start__"])
    return found


# 1. Topology -------------------------------------------------------------------------------


@pytest.mark.parametrize("compiled", [graph, arag_no_nli_graph, arag_no_nli_csa_graph])
def test_every_route_reaches_the_ranker(compiled: Any) -> None:
    paths = paths_to_end(compiled)
    assert paths and all(path[-2] == "item_ranker" for path in paths)
    assert all(path[1:3] == ["validate_input", "recall"] for path in paths)
    drawn = compiled.get_graph()
    assert {e.source for e in drawn.edges if e.target == "__end__"} == {"item_ranker"}


def test_graph_shapes() -> None:
    assert set(graph.get_graph().nodes) >= {"user_understanding", "nli", "nli_item", "context_summary"}
    assert "nli" not in arag_no_nli_graph.get_graph().nodes
    assert "context_summary" in arag_no_nli_graph.get_graph().nodes
    assert not {"nli", "nli_item", "context_summary"} & set(arag_no_nli_csa_graph.get_graph().nodes)
    fan_out = {e.target for e in graph.get_graph().edges if e.source == "recall"}
    assert fan_out == {"user_understanding", "nli", "nli_item"}


def test_uua_and_batched_nli_share_one_superstep() -> None:
    steps = task_steps(graph, REQUEST, AragContext(llm="heuristic"))
    assert len(steps["user_understanding"]) == len(steps["nli"]) == 1
    parallel = steps["user_understanding"][0]
    assert steps["nli"] == [parallel] and steps["recall"] == [parallel - 1]
    assert steps["context_summary"] == [parallel + 1] and steps["item_ranker"] == [parallel + 2]
    assert "nli_item" not in steps


def test_per_item_nli_fans_out_in_the_same_superstep() -> None:
    steps = task_steps(graph, REQUEST, AragContext(llm="heuristic", arag_nli_mode="per_item"))
    assert len(steps["nli_item"]) == len(CANDIDATES)
    assert set(steps["nli_item"]) == set(steps["user_understanding"])
    assert steps["context_summary"] == [steps["user_understanding"][0] + 1]  # runs once, after all
    assert "nli" not in steps


@pytest.mark.parametrize(("use_nli", "use_csa"), [(True, True), (True, False), (False, True), (False, False)])
def test_context_switches_route_through_the_ranker(use_nli: bool, use_csa: bool) -> None:
    output = graph.invoke(
        REQUEST, context=AragContext(llm="heuristic", arag_use_nli=use_nli, arag_use_csa=use_csa)
    )
    got = roles(output)
    assert got[:2] == ["validate_input", "recall"] and got[-1] == "item_ranker"
    assert ("nli" in got) == use_nli and ("context_summary" in got) == use_csa
    assert sorted(output["ranking"]) == sorted(CANDIDATES)
    reference = graph if use_nli else arag_no_nli_graph
    assert output["ranking"] == reference.invoke(REQUEST, context=AragContext(llm="heuristic"))["ranking"]


# 2. Scripted model -------------------------------------------------------------------------


NLI_ANSWER = {"50": 9.0, "181": 14.0, "1": 2.0, "2": 7.0, "3": 1.0}  # "100" left out, 14 clipped
LLM_RANKING = ["3", "100", "2", "1", "181", "50"]


def scripted_model() -> SchemaRoutedModel:
    judgments = [{"item_id": i, "score": s, "justification": f"why {i}"} for i, s in NLI_ANSWER.items()]
    judgments.append({"item_id": "ghost", "score": 5, "justification": "?"})

    def per_item(messages: list[BaseMessage]) -> str:
        item = str(messages[-1].content).split("Candidates (id in square brackets):\n[")[1].split("]")[0]
        return json.dumps({"item_id": item, "score": NLI_ANSWER.get(item, 0.0), "justification": "one"})

    return SchemaRoutedModel(
        answers={
            "UserSummary": json.dumps(
                {"long_term": "Loves space operas.", "session_intent": "Wants comedy."}
            ),
            "NliJudgments": json.dumps({"judgments": judgments}),
            "NliJudgment": per_item,
            "ContextSummary": json.dumps({"summary": "Sci-fi classics with a comic streak."}),
            "ExplainedRanking": json.dumps(
                {
                    "ranking": [*LLM_RANKING[:-1], "3"],  # a duplicate, and "50" missing
                    "rationales": [{"item_id": "3", "reason": "funny"}, {"item_id": "zzz", "reason": "?"}],
                    "explanation": "Comedy first.",
                }
            ),
        }
    )


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


# 3. The simulated OpenAI-compatible server -------------------------------------------------


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


# 4. The bundled SmolLM2 --------------------------------------------------------------------


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


# 5. Heuristic fallbacks and ablations ------------------------------------------------------


def full_state(request: dict, context: AragContext) -> dict:
    """Every state field of one run (the compiled graphs only return `RecOutput`)."""
    compiled = build_arag().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    compiled.invoke(request, config=config, context=context)
    return compiled.get_state(config).values


def test_heuristic_run_is_deterministic() -> None:
    first = graph.invoke(REQUEST, context=AragContext(llm="heuristic"))
    second = graph.invoke(REQUEST, context=AragContext(llm="heuristic"))
    assert first["ranking"] == second["ranking"] and first["scores"] == second["scores"]
    assert [m["content"] for m in first["trace"]] == [m["content"] for m in second["trace"]]
    assert set(first["rationales"]) == set(CANDIDATES)
    assert {u["calls"] for u in first["usage"]} == {0}
    assert {u["source"] for u in first["usage"]} == {"heuristic"}
    ordered = sorted(CANDIDATES, key=lambda i: -first["scores"][i])
    assert [first["scores"][i] for i in first["ranking"]] == [first["scores"][i] for i in ordered]


def test_heuristic_fusion_is_the_documented_one() -> None:
    env = get_environment("ml-100k")
    history = env.history("1")
    nli = {i: s for i, (s, _) in heuristic_nli(env, history, CANDIDATES, 5).items()}
    assert all(0.0 <= s <= 10.0 for s in nli.values()) and len(set(nli.values())) > 1
    session = session_similarity(env, history, CANDIDATES, 5)
    fused, basis = fused_scores(env, history, CANDIDATES, 5, nli)
    expected = 0.5 * np.array([nli[i] for i in CANDIDATES]) / 10 + 0.5 * session
    assert np.allclose(fused, expected) and "NLI" in basis
    alone, basis = fused_scores(env, history, CANDIDATES, 5, None)
    assert np.allclose(alone, session) and basis == "similarity to the session"


def test_threshold_excludes_items_from_the_summary_but_not_from_the_ranking() -> None:
    env = get_environment("ml-100k")
    scores = {i: s for i, (s, _) in heuristic_nli(env, env.history("1"), CANDIDATES, 5).items()}
    theta = float(np.median(list(scores.values())))
    state = full_state(REQUEST, AragContext(llm="heuristic", arag_nli_threshold=theta))
    accepted = [i for i in CANDIDATES if scores[i] >= theta]
    rejected = [i for i in CANDIDATES if scores[i] < theta]
    assert accepted and rejected
    assert sorted(state["accepted_items"]) == sorted(accepted)
    assert [scores[i] for i in state["accepted_items"]] == sorted((scores[i] for i in accepted), reverse=True)
    for item in rejected:
        assert env.dataset.items[item].title not in state["context_summary"]
    assert sorted(state["ranking"]) == sorted(CANDIDATES)


def test_nothing_accepted_skips_the_summary_call(monkeypatch) -> None:
    model = install(monkeypatch, scripted_model())
    output = graph.invoke(REQUEST, context=replace(LLM, arag_nli_threshold=10.5))
    usage = {u["agent"]: u for u in output["usage"]}
    assert usage["context_summary"]["calls"] == 0 and usage["context_summary"]["source"] == "heuristic"
    summary = output["trace"][roles(output).index("context_summary")]["content"]
    assert "None of the 6 recalled items" in summary
    assert [name for name, _ in model.calls].count("ContextSummary") == 0
    assert sorted(output["ranking"]) == sorted(CANDIDATES)


def test_ablations_rank_validly() -> None:
    for compiled, expected in (
        (arag_no_nli_graph, ["user_understanding", "context_summary", "item_ranker"]),
        (arag_no_nli_csa_graph, ["user_understanding", "item_ranker"]),
    ):
        # The switches fixed at build time win over the AragContext.
        output = compiled.invoke(
            REQUEST, context=AragContext(llm="heuristic", arag_use_nli=True, arag_use_csa=True)
        )
        assert roles(output)[2:] == expected
        assert sorted(output["ranking"]) == sorted(CANDIDATES)
        assert all("NLI" not in reason for reason in output["rationales"].values())
    summary = arag_no_nli_graph.invoke(REQUEST, context=AragContext(llm="heuristic"))["trace"][3]["content"]
    assert "6 of 6 recalled items kept (all recalled items, unweighted" in summary


def test_retrieve_mode_recalls_k_unseen_items() -> None:
    env = get_environment("ml-100k")
    output = graph.invoke({"user_id": "1"}, context=AragContext(llm="heuristic", arag_recall_k=7))
    assert len(output["ranking"]) == len(set(output["ranking"])) == 7
    assert not set(output["ranking"]) & set(env.history("1"))
    assert len(graph.invoke({"user_id": "1"}, context=AragContext(llm="heuristic", top_k=4))["ranking"]) == 4


def test_a_rerun_thread_reads_only_its_own_posts() -> None:
    compiled = build_arag().compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "again"}}
    compiled.invoke(REQUEST, config=config, context=AragContext(llm="heuristic"))
    second = compiled.invoke(
        {"user_id": "1", "candidates": ["7", "8", "9"]}, config=config, context=AragContext(llm="heuristic")
    )
    assert sorted(second["ranking"]) == ["7", "8", "9"] and set(second["scores"]) == {"7", "8", "9"}
    assert roles(second).count("recall") == 2
