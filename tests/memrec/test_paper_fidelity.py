"""MemRec as its paper describes it: LLM ReRank ranks by the model's scores alone, the Vector
configuration is MiniLM cosine of facets and candidate memories only, and Stage W reads the Stage R
facets and the curated N'_k and rewrites neighbour memories. Each of these tests fails on the code
before the change (CF tie-break and fill-in, a half-collaborative "Vector", a facet-less write that
appends)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.memrec.curation import curate, resolve_rule_set
from agents.memrec.feature_index import feature_index
from agents.memrec.rerank import LEFT_OUT
from agents.memrec.vector_config import vector_config_scores
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from bench.run.invoke import prepare_method
from graphs.memrec.graph import graph
from graphs.memrec.warmup import MEMORY_DIR
from graphs.memrec.write import graph as write_graph
from state.memrec.context import MemRecContext
from tests.fakes import ScriptedChatModel, install
from world.environment import get_environment
from world.results_log import ResultsLog

CANDIDATES = ["50", "181", "1", "2", "3", "100", "258"]
LLM = MemRecContext(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=0)


def facets_answer(*facets: tuple[str, float]) -> str:
    """A Stage R answer with these (facet, confidence) pairs and no supporting neighbours."""
    rows = [{"facet": text, "confidence": conf, "supporting_neighbors": []} for text, conf in facets]
    return json.dumps({"facets": rows, "support_edges": []})


def no_collaborative_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every collaborative score (and the blend that holds them) raise if anything reads it."""

    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a collaborative score was read")

    import agents.memrec.collaborative
    import agents.memrec.rerank

    for module in (agents.memrec.collaborative, agents.memrec.rerank):
        for name in ("interacted", "cosine_cooccurrence"):
            monkeypatch.setattr(module, name, forbidden)
    monkeypatch.setattr("graphs.memrec.graph.blend_parts", forbidden, raising=False)


def test_llm_ranking_is_the_model_s_scores_then_its_listing_then_input_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_collaborative_reads(monkeypatch)
    listed = [("3", 0.7), ("50", 0.9), ("100", 0.7), ("1", 0.2), ("181", 0.9), ("2", 0.2)]  # 258 left out
    scores = {"scores": [{"item_id": i, "score": s, "rationale": "r"} for i, s in listed]}
    script = [facets_answer(("Space adventures", 0.9)), json.dumps(scores)]
    install(monkeypatch, ScriptedChatModel(script=script))
    output = graph.invoke({"user_id": "1", "candidates": CANDIDATES}, context=LLM)
    # 0.9: 50 before 181 (listed first); 0.7: 3 before 100; 0.2: 1 before 2; 258 last (left out).
    assert output["ranking"] == ["50", "181", "3", "100", "1", "2", "258"]
    assert output["scores"]["258"] == 0.0 and output["rationales"]["258"] == LEFT_OUT
    rerank = output["usage"][-1]
    assert rerank["source"] == "llm" and rerank["model_ids"] == [i for i, _ in listed]
    # The left-out candidate is the one position the rule placed (it feeds model_share).
    assert rerank["ranking_origin"]["all"] == {"model": 6, "repair": 1, "fallback": 0}
    assert rerank["ranking_origin"]["top5"] == {"model": 5, "repair": 0, "fallback": 0}
    assert "6 tied (in the model's listing order), 1 left out (input order)" in output["trace"][-1]["content"]


def test_vector_configuration_scores_by_hand() -> None:
    facets = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    memories = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])
    # (0.8 cos(f1, m) + 0.2 cos(f2, m)) / (0.8 + 0.2)
    scores = vector_config_scores(facets, [0.8, 0.2], memories)
    assert scores.tolist() == pytest.approx([0.8, 0.8 * 0.6 + 0.2 * 0.8, 0.0, -0.2])
    # Confidences summing to 0: the plain mean over facets.
    assert vector_config_scores(facets, [0.0, 0.0], memories).tolist() == pytest.approx([0.5, 0.7, 0.0, -0.5])
    assert vector_config_scores(np.zeros((0, 3)), [], memories).tolist() == [0.0] * 4


def test_vector_ranker_reads_only_facets_and_candidate_memories(monkeypatch: pytest.MonkeyPatch) -> None:
    no_collaborative_reads(monkeypatch)
    env = get_environment("ml-100k")
    index = feature_index(env)
    rows = [env.item_index[c] for c in CANDIDATES]
    memory = np.asarray(index.item_vectors[np.array(rows)], dtype=np.float64)
    # Each facet's text embeds to the catalog vector of one candidate (so the sums are checkable).
    stand_in = {"Space adventures": memory[0], "Crime dramas": memory[1]}
    monkeypatch.setattr(
        "agents.memrec.vector_config.embed_texts", lambda texts: np.stack([stand_in[t] for t in texts])
    )
    model = install(
        monkeypatch,
        ScriptedChatModel(script=[facets_answer(("Space adventures", 0.75), ("Crime dramas", 0.25))]),
    )
    context = MemRecContext(llm="openai:gpt-4o-mini", memrec_ranker="vector", llm_retries=0)
    output = graph.invoke({"user_id": "1", "candidates": CANDIDATES}, context=context)
    assert len(model.received) == 1  # synthesis only: no LLM_Rec call
    expected = {
        c: 0.75 * float(memory[0] @ memory[i]) + 0.25 * float(memory[1] @ memory[i])
        for i, c in enumerate(CANDIDATES)
    }
    assert output["scores"] == pytest.approx(expected)
    assert output["ranking"] == sorted(CANDIDATES, key=lambda c: (-expected[c], CANDIDATES.index(c)))


def write_context(tiny: Path, tmp_path: Path, **fields: object) -> MemRecContext:
    return MemRecContext(
        dataset=str(tiny),
        memrec_memory=str(tmp_path / "memory.sqlite"),
        memrec_write_mode="sync",
        **fields,  # type: ignore[arg-type]
    )


def test_stage_w_prompt_holds_the_stage_r_facets_and_the_curated_neighbours(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = {
        "user_memory": "Likes space adventures.",
        "item_memory": "A space adventure.",
        "neighbor_updates": [],
    }
    script = [facets_answer(("Space adventures", 0.9)), json.dumps(write)]
    model = install(monkeypatch, ScriptedChatModel(script=script))
    ctx = write_context(tiny_dataset_dir, tmp_path, llm="openai:gpt-4o-mini", llm_retries=0)
    write_graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    env = get_environment(ctx.dataset)
    index = feature_index(env, ctx.memrec_memory)
    found = curate(index, resolve_rule_set(ctx, env), "u1", ["3"], ctx.memrec_k, 4, 4, env.history("u1"))
    curated = [node for node in found.node_ids if node != "i:3"]
    assert curated  # u1's N'_k for this interaction: i:1, i:6, u:u2
    prompt = str(model.received[1][-1].content)
    assert '- "Space adventures" [0.90]' in prompt
    texts = index.graph.memories(curated)
    for node in curated:
        assert f"- {node} (" in prompt and texts[node][0][:40] in prompt


def test_a_neighbour_memory_is_rewritten_by_the_model_and_appended_only_by_the_fallback(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rewrite = "Fans of serious dramas; now also drawn to space adventures."
    write = {
        "user_memory": "Likes space adventures.",
        "item_memory": "A space adventure.",
        "neighbor_updates": [{"neighbor_id": "u:u2", "memory_update": rewrite, "rationale": "shared item 1"}],
    }
    install(
        monkeypatch, ScriptedChatModel(script=[facets_answer(("Space adventures", 0.9)), json.dumps(write)])
    )
    ctx = write_context(tiny_dataset_dir, tmp_path / "llm", llm="openai:gpt-4o-mini", llm_retries=0)
    graph_ = feature_index(get_environment(ctx.dataset), ctx.memrec_memory).graph
    before = graph_.memory("u:u2")[0]
    out = write_graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    assert out["neighbours"] == ["u:u2"]
    assert graph_.memory("u:u2") == (rewrite, 1) and before not in rewrite
    # The fallback (no LLM) appends its one line to the neighbour's memory instead.
    plain = write_context(tiny_dataset_dir, tmp_path / "heuristic")
    memory = feature_index(get_environment(plain.dataset), plain.memrec_memory).graph
    write_graph.invoke({"user_id": "u1", "item_id": "3"}, context=plain)
    text, version = memory.memory("u:u2")
    assert (
        version == 1
        and text.startswith(before.rstrip("."))
        and text.endswith('recently chose "Gamma Quest".')
    )


def test_the_user_memory_accumulates_across_writes(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    ctx = write_context(tiny_dataset_dir, tmp_path)
    memory = feature_index(get_environment(ctx.dataset), ctx.memrec_memory).graph
    first = memory.memory("u:u1")[0]
    write_graph.invoke({"user_id": "u1", "item_id": "3"}, context=ctx)
    write_graph.invoke({"user_id": "u1", "item_id": "5"}, context=ctx)
    text, version = memory.memory("u:u1")
    assert version == 2 and text.startswith(first.split(".")[0])
    assert 'Recently chose "Gamma Quest"' in text and 'Recently chose "Epsilon Drama"' in text


def test_the_bench_warm_up_runs_stage_r_before_its_write(tiny_dataset_dir: Path, tmp_path: Path) -> None:
    protocol = Protocol(dataset=str(tiny_dataset_dir), candidates=3, users=10)
    cases = plan_cases(get_environment(str(tiny_dataset_dir)), protocol)
    log = ResultsLog(tmp_path / "results.jsonl", protocol.as_dict())
    prepared = prepare_method("memrec", cases, protocol, log, 1, MemRecContext(dataset=str(tiny_dataset_dir)))
    lines = (tmp_path / MEMORY_DIR / "memrec.warmup.jsonl").read_text().splitlines()
    assert lines and all(
        [u["agent"] for u in json.loads(line)["usage"]] == ["synthesise", "propagate"] for line in lines
    )
    assert prepared.metrics["stage_w"]["jobs"] == len(lines)
