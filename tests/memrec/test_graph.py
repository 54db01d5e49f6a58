"""MemRec recommendation path: hand-checked features, curation, budget, scripted and simulated models."""

import asyncio
import json
import math
from pathlib import Path

import numpy as np
import pytest

from agents.memrec.curation import curate, resolve_rule_set, select_top
from agents.memrec.feature_index import feature_index
from agents.memrec.features import neighbour_features
from agents.memrec.rerank import validate_scores
from agents.memrec.rules import FEATURES
from agents.memrec.synthesis import fit_budget, validate_facets
from agents.usage import critical_path_depth, estimate_tokens
from graphs.memrec.graph import graph
from graphs.registry import get_graph
from state.memrec.context import MemRecContext
from state.memrec.schemas import CandidateScore, CandidateScores, Facet, FacetSet, SupportEdge
from tests.fakes import ScriptedChatModel, install
from world.environment import get_environment

ML = "ml-100k"
CANDIDATES = ["50", "181", "1", "2", "3", "100", "258"]
ROLES = ["validate_input", "curate", "synthesise", "rerank"]
LLM = MemRecContext(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=1)


def features_of(found, node: str) -> dict[str, float]:
    row = found.node_ids.tolist().index(node)
    return dict(zip(FEATURES, found.matrix[row].tolist(), strict=True))


def test_features_against_hand_computed_values(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    index = feature_index(env)
    # Training: u1 {1@100, 6@200}, u2 {1@100}, u3 {2@100, 4@200}; ratings all 4.
    found = neighbour_features(index, "u2", ["6", "2"], candidate_aware=True)
    assert found.node_ids.tolist() == ["i:1", "u:u1"] and found.is_item.tolist() == [True, False]
    item, user = features_of(found, "i:1"), features_of(found, "u:u1")
    # item 1: newest edge, full rating; u1 (other than u2) has it and candidate 6 -> 1 co-occurrence.
    assert item["edge_weight"] == pytest.approx(1.0) and item["recency_days"] == 0.0
    assert item["co_interaction_count"] == 1.0
    # d_item1 = {Action .5, Sci-Fi .5}; candidates {Sci-Fi .5, Romance .25, Comedy .25}; d_u2 = d_item1.
    assert item["metadata_overlap_score"] == pytest.approx(0.5 * (0.5 / 1.5) + 0.5 * 1.0)
    # u1 shares item 1 (weight 1): 1 / sqrt(|I_u2|=1 * |I_u1|=2); d_u1 = {Action 1/3, Sci-Fi 2/3}.
    assert user["edge_weight"] == pytest.approx(1 / math.sqrt(2)) and user["recency_days"] == 0.0
    assert user["co_interaction_count"] == 1.0
    assert user["metadata_overlap_score"] == pytest.approx(0.5 * (0.5 / 1.5) + 0.5 * (5 / 6) / (7 / 6))
    # The default, Eq. 2's: no candidates. Item 1's co-occurrence with the rest of u2's history (none:
    # u1 shares only item 1 with u2) is 0; overlaps are with u2's profile alone: Ruzicka(d_item1, d_u2)
    # = 1, Ruzicka(d_u1, d_u2) = (1/3 + 1/2) / (1/2 + 2/3) = 5/7.
    plain = neighbour_features(index, "u2", ["6", "2"])
    item, user = features_of(plain, "i:1"), features_of(plain, "u:u1")
    assert (item["co_interaction_count"], user["co_interaction_count"]) == (0.0, 1.0)
    assert item["metadata_overlap_score"] == pytest.approx(1.0)
    assert user["metadata_overlap_score"] == pytest.approx(5 / 7)
    u2 = index.user_vectors[env.user_index["u2"]]
    expected = max(float(index.item_vectors[env.item_index["1"]] @ u2), 0.0)
    assert item["memory_similarity_score"] == pytest.approx(expected)
    assert 0.0 <= user["memory_similarity_score"] <= 1.0
    # u1: item 1 has one later interaction (item 6), 100 s before the anchor.
    u1 = neighbour_features(index, "u1", ["3"])
    assert features_of(u1, "i:1")["edge_weight"] == pytest.approx(0.5 ** (1 / 20))
    assert features_of(u1, "i:1")["recency_days"] == pytest.approx(100 / 86400)
    assert features_of(u1, "i:6")["edge_weight"] == pytest.approx(1.0)
    # A scenario that hides item 1 (e.g. cold_user) hides it and the users reached through it.
    hidden = neighbour_features(index, "u1", ["3"], visible=["6", "3"])
    assert hidden.node_ids.tolist() == ["i:6"]


def test_curation_reads_the_candidates_only_when_asked(tiny_dataset_dir: Path) -> None:
    """Eq. 2 scores the neighbourhood without the candidates, and so does the default; the
    candidate-aware variant (`memrec_curation = "candidates"`) keeps N'_k moving with them."""
    tiny = feature_index(get_environment(str(tiny_dataset_dir)))
    for candidates, co in ((["6", "2"], 1.0), (["2", "4"], 0.0)):
        aware = neighbour_features(tiny, "u2", candidates, candidate_aware=True)
        assert features_of(aware, "i:1")["co_interaction_count"] == co
        assert features_of(neighbour_features(tiny, "u2", candidates), "i:1")["co_interaction_count"] == 0.0
    env = get_environment(ML)
    index, rules = feature_index(env), resolve_rule_set(MemRecContext(), env)
    popular, obscure = ["50", "181", "100"], ["1682", "1681", "1680"]
    first, second = (curate(index, rules, "1", c, 16, 4, 4) for c in (popular, obscure))
    assert first.node_ids == second.node_ids
    first, second = (curate(index, rules, "1", c, 16, 4, 4, candidate_aware=True) for c in (popular, obscure))
    assert first.node_ids != second.node_ids


def test_history_co_occurrence_counts_the_rest_of_the_users_items() -> None:
    """ml-100k user 1: an item neighbour's co_interaction_count, brute-forced from the training
    matrix: over every other user v holding it, the number of user 1's other training items v holds."""
    env = get_environment(ML)
    found = neighbour_features(feature_index(env), "1", CANDIDATES)
    matrix = (env.train_matrix.tocsr() > 0).astype(int)
    own = set(matrix[env.user_index["1"]].indices.tolist())
    for node in found.node_ids[found.is_item][:5].tolist():
        column = env.item_index[node.removeprefix("i:")]
        holders = [v for v in matrix[:, column].nonzero()[0].tolist() if v != env.user_index["1"]]
        expected = sum(len(own & set(matrix[v].indices.tolist())) - 1 for v in holders)
        assert features_of(found, node)["co_interaction_count"] == expected


def test_top_k_keeps_user_and_item_floors() -> None:
    scores = np.array([9.0, 8.0, 7.0, 6.0, 1.0, 0.5, 0.4])
    is_item = np.array([False, False, False, False, True, True, True])
    assert select_top(scores, is_item, 4, 0, 0).tolist() == [0, 1, 2, 3]
    assert select_top(scores, is_item, 4, 1, 2).tolist() == [0, 1, 4, 5]
    assert select_top(scores, is_item, 10, 1, 2).tolist() == list(range(7))
    env = get_environment(ML)
    found = curate(feature_index(env), resolve_rule_set(MemRecContext(), env), "1", CANDIDATES, 16, 5, 6)
    assert len(found.node_ids) == 16 and found.is_item.sum() >= 6 and (~found.is_item).sum() >= 5
    assert list(found.scores) == sorted(found.scores, reverse=True)


def test_token_budget_shortens_then_drops_lowest_scored_first() -> None:
    notes = [(f"i:{n} (item): " + "x" * 200, f"i:{n} (item): short") for n in range(10)]
    ids = [f"i:{n}" for n in range(10)]
    roomy = fit_budget("memory", ids, notes, "Candidates:\n[1] a", 2000)
    assert roomy.shortened == 0 and roomy.dropped == 0 and roomy.tokens <= 2000
    tight = fit_budget("memory", ids, notes, "Candidates:\n[1] a", 300)
    assert tight.tokens <= 300 and tight.shortened > 0 and tight.dropped == 0
    assert tight.lines[-1].endswith("short") and tight.lines[0].endswith("x" * 10)
    tiny = fit_budget("memory", ids, notes, "Candidates:\n[1] a", 40)
    assert tiny.tokens <= 40 and tiny.dropped > 0 and tiny.shown == ids[: 10 - tiny.dropped]
    output = graph.invoke(
        {"user_id": "1", "candidates": CANDIDATES}, context=MemRecContext(memrec_token_budget=250)
    )
    note = output["trace"][2]["content"]
    assert int(note.split("context ")[1].split(" tokens")[0]) <= 250


def test_validators_repair_and_count() -> None:
    answer = FacetSet(
        facets=[
            Facet(facet="Likes noir", confidence=1.4, supporting_neighbors=["i:1", "u:ghost", "i:1"]),
            Facet(facet="likes noir", confidence=0.5),
            Facet(facet="Old films", confidence=-0.2),
        ],
        support_edges=[
            SupportEdge(**{"from": "i:1", "to": "u:7", "w": 2}),
            SupportEdge(**{"from": "x", "to": "u:7", "w": 1}),
        ],
    )
    fixed, repairs = validate_facets(answer, ["i:1"], "7", 7)
    assert [f.confidence for f in fixed.facets] == [1.0, 0.0] and fixed.facets[0].supporting_neighbors == [
        "i:1"
    ]
    assert sorted(repairs) == sorted(
        [
            "confidence_clipped",
            "unknown_neighbour",
            "duplicate_neighbour",
            "duplicate_facet",
            "confidence_clipped",
            "weight_clipped",
            "invalid_edge",
        ]
    )
    scores = CandidateScores(
        scores=[
            CandidateScore(item_id="b", score=1.5),
            CandidateScore(item_id="zz", score=0.1),
            CandidateScore(item_id="b", score=0.2),
        ]
    )
    fixed_scores, repairs = validate_scores(scores, ["a", "b"])
    # The model's entries in its order, then the left-out candidate at score 0 (no fallback score).
    assert [(s.item_id, s.score) for s in fixed_scores.scores] == [("b", 1.0), ("a", 0.0)]
    assert sorted(repairs) == ["duplicate_id", "missing_id", "score_clipped", "unknown_id"]


def scripted_answers(supporter: str) -> list[str]:
    facets = {
        "facets": [
            {"facet": "Space adventures", "confidence": 1.7, "supporting_neighbors": [supporter, "u:ghost"]},
            {"facet": "Comedy", "confidence": 0.6, "supporting_neighbors": []},
        ],
        "support_edges": [{"from": supporter, "to": "u:1", "w": 0.8}],
    }
    scores = {
        "scores": [
            {"item_id": "2", "score": 0.95, "rationale": "fits"},
            {"item_id": "999999", "score": 0.9, "rationale": "hallucinated"},
            {"item_id": "181", "score": 1.3, "rationale": "clipped"},
            {"item_id": "2", "score": 0.1, "rationale": "duplicate"},
            *({"item_id": c, "score": 0.2, "rationale": "meh"} for c in CANDIDATES[:2] if c != "181"),
        ]
    }
    return [json.dumps(facets), json.dumps(scores)]


def test_scripted_models_run_the_whole_path(monkeypatch) -> None:
    env = get_environment(ML)
    found = curate(feature_index(env), resolve_rule_set(MemRecContext(), env), "1", CANDIDATES, 16, 4, 4)
    model = install(monkeypatch, ScriptedChatModel(script=scripted_answers(found.node_ids[0]) * 2))
    request = {"user_id": "1", "candidates": CANDIDATES}
    output = graph.invoke(request, context=LLM)
    assert sorted(output["ranking"]) == sorted(CANDIDATES) and output["ranking"][:2] == ["181", "2"]
    assert output["scores"]["181"] == 1.0 and output["rationales"]["2"] == "fits"
    assert [m["role"] for m in output["trace"]] == ROLES
    synth, rerank = output["usage"]
    assert (synth["agent"], rerank["agent"]) == ("synthesise", "rerank") and synth["source"] == "llm"
    assert synth["repair_kinds"] == {"confidence_clipped": 1, "unknown_neighbour": 1}
    assert rerank["repair_kinds"] == {"unknown_id": 1, "duplicate_id": 1, "score_clipped": 1, "missing_id": 4}
    prompt = str(model.received[1][-1].content)
    assert '"Space adventures" [1.00]' in prompt and "Candidates (id in square brackets):" in prompt
    assert found.node_ids[0] in str(model.received[0][-1].content)
    again = asyncio.run(graph.ainvoke(request, context=LLM))
    assert again["ranking"] == output["ranking"] and not model.script


def test_vector_ranker_makes_no_rerank_call(monkeypatch) -> None:
    model = install(monkeypatch, ScriptedChatModel(script=scripted_answers("i:1")[:1]))
    context = MemRecContext(llm="openai:gpt-4o-mini", memrec_ranker="vector", llm_retries=0)
    output = graph.invoke({"user_id": "1", "candidates": CANDIDATES}, context=context)
    assert len(model.received) == 1 and output["usage"][1]["calls"] == 0
    assert output["trace"][-1]["content"].startswith("[vector]")


def test_heuristic_mode_is_deterministic_and_ablations_differ() -> None:
    request = {"user_id": "7", "candidates": CANDIDATES}
    first = graph.invoke(request, context=MemRecContext())
    again = asyncio.run(graph.ainvoke(request, context=MemRecContext()))
    assert first["ranking"] == again["ranking"] and first["scores"] == again["scores"]
    assert [m["role"] for m in first["trace"]] == ROLES
    ordered = [first["scores"][i] for i in first["ranking"]]
    assert ordered == sorted(ordered, reverse=True) and ordered[0] > ordered[-1] > 0.0
    assert "'movietv'" in first["trace"][1]["content"]
    no_read = get_graph("memrec_no_read").invoke(request, context=MemRecContext())
    assert "disabled" in no_read["trace"][1]["content"] and sorted(no_read["ranking"]) == sorted(CANDIDATES)
    generic = get_graph("memrec_no_llm_rules").invoke(request, context=MemRecContext())
    assert "'generic'" in generic["trace"][1]["content"]


def test_users_without_training_history_and_retrieve_mode(tiny_dataset_dir: Path) -> None:
    context = MemRecContext(dataset=str(tiny_dataset_dir), top_k=3)
    output = graph.invoke({"user_id": "u4", "candidates": ["1", "3", "6"]}, context=context)
    assert sorted(output["ranking"]) == ["1", "3", "6"]
    retrieved = graph.invoke({"user_id": "u1"}, context=context)
    assert len(retrieved["ranking"]) == 3 and not {"1", "6"} & set(retrieved["ranking"])


def test_simulated_endpoint_has_critical_path_depth_two() -> None:
    from llmsim.process import SimServer

    with SimServer() as server:
        context = MemRecContext(llm="sim", base_url=server.base_url)
        for user in ("1", "7", "42"):
            output = graph.invoke({"user_id": user, "candidates": CANDIDATES}, context=context)
            assert sorted(output["ranking"]) == sorted(CANDIDATES)
            assert [u["source"] for u in output["usage"]] == ["llm", "llm"]
            assert critical_path_depth(output["usage"]) == 2
            synth = output["usage"][0]
            assert synth["input_tokens"] > estimate_tokens("x" * 400) and synth["output_tokens"] > 0
        assert server.stats()["requests"] == 6


def test_failed_synthesis_falls_back_to_category_facets(monkeypatch) -> None:
    script = ["not json", '{"facets": []}', scripted_answers("i:1")[1]]
    install(monkeypatch, ScriptedChatModel(script=script))
    output = graph.invoke({"user_id": "1", "candidates": CANDIDATES}, context=LLM)
    synth, rerank = output["usage"]
    assert synth["source"] == "fallback" and synth["calls"] == 2
    assert synth["errors"] == {"malformed_json": 1, "no_facets": 1}
    assert "weighted support" in output["trace"][2]["content"] and rerank["source"] == "llm"
