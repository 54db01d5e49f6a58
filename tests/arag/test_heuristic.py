"""ARAG's heuristic fallbacks and ablations: deterministic runs, the documented fusion, the threshold,
the skipped summary call, valid ablation rankings, retrieve mode and a rerun thread's posts."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from langgraph.checkpoint.memory import InMemorySaver

from agents.arag.signals import fused_scores, heuristic_nli, session_similarity
from graphs.arag.graph import arag_no_nli_csa_graph, arag_no_nli_graph, build_arag, graph
from state.arag.context import AragContext
from tests.arag.scripted import CANDIDATES, LLM, REQUEST, roles, scripted_model
from tests.fakes import install
from world.environment import get_environment


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
