"""AMEM4Rec ranking: one ranker call (depth 1) over the retrieved memories, a permutation of exactly
the candidates, the documented fallback, missing pools, titles-only catalogs, and Studio's view."""

import asyncio
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.amem4rec.extract import forbidden_names
from agents.amem4rec.patterns import NO_CATEGORIES_NOTE
from agents.usage import critical_path_depth
from graphs.amem4rec.graph import graph
from graphs.amem4rec.train_graph import graph as train_graph
from graphs.amem4rec.training import train_pool
from graphs.registry import METHODS, SERVICE_GRAPHS, get_graph
from state.amem4rec.context import Amem4RecContext
from tests.fakes import ScriptedChatModel, install
from tools.amem4rec.folder import open_pool
from tools.amem4rec.index import PoolError
from tools.similarity import profile_vector
from world.environment import get_environment

CANDIDATES = ["9", "3", "7", "12", "5"]


@pytest.fixture
def trained(amem_dataset: str, amem_histories: dict[str, list[str]], tmp_path: Path) -> Amem4RecContext:
    ctx = Amem4RecContext(dataset=amem_dataset, amem4rec_pool=str(tmp_path / "pool"))
    train_pool(get_environment(amem_dataset), ctx, list(amem_histories), concurrency=2)
    return ctx


def test_heuristic_ranking_is_the_documented_fallback(trained: Amem4RecContext) -> None:
    out = graph.invoke({"user_id": "a", "candidates": CANDIDATES}, context=trained)
    assert sorted(out["ranking"]) == sorted(CANDIDATES)
    assert [m["role"] for m in out["trace"]] == ["validate_input", "retrieve_memories", "rank"]
    assert (
        len(out["usage"]) == 1 and out["usage"][0]["calls"] == 0 and out["usage"][0]["source"] == "heuristic"
    )
    env = get_environment(trained.dataset)
    pool = open_pool(Path(trained.amem4rec_pool), env.dataset)
    history = env.history("a")  # 1 4 8 11 6 4 2: all before the test item
    query = "; ".join(
        f"{env.dataset.items[i].title} ({', '.join(env.dataset.items[i].categories)})" for i in history
    )
    from world.embeddings import embed_texts

    found = pool.search(embed_texts([query])[0], 5)
    assert out["details"] == {"pool_size": pool.size(), "memories_used": len(found)}
    items = env.item_vectors()[[env.item_index[c] for c in CANDIDATES]].astype(np.float64)
    weights = np.array([max(s, 0.0) for _, s in found])
    centre = weights @ pool.vectors([m.id for m, _ in found]).astype(np.float64) / weights.sum()
    expected = 0.5 * (items @ profile_vector(env, history)) + 0.5 * (items @ centre)
    assert [out["scores"][c] for c in CANDIDATES] == pytest.approx(expected.tolist())
    assert out["ranking"] == [CANDIDATES[i] for i in np.argsort(-expected, kind="stable")]


def test_one_scripted_ranker_call_is_repaired_into_a_permutation(
    trained: Amem4RecContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = {"ranked_item_ids": ["12", "12", "ghost", "9"], "reasoning": "Recent science fiction first."}
    model = install(monkeypatch, ScriptedChatModel(script=[json.dumps(answer)]))
    ctx = replace(trained, llm="openai:gpt-4o-mini", llm_retries=0)
    out = graph.invoke({"user_id": "a", "candidates": CANDIDATES}, context=ctx)
    usage = out["usage"]
    assert critical_path_depth(usage) == 1 and usage[0]["calls"] == 1 and usage[0]["source"] == "llm"
    assert out["ranking"][:2] == ["12", "9"] and sorted(out["ranking"]) == sorted(CANDIDATES)
    assert usage[0]["repair_kinds"] == {"duplicate_id": 1, "unknown_id": 1, "missing_id": 3}
    assert "scores" not in out
    prompt = str(model.received[0][-1].content)
    history_part, _, candidate_part = prompt.partition("Candidates (id in square brackets):")
    lines = history_part.splitlines()
    assert lines[1].startswith('[2] "Iron Comet"') and lines[2].startswith('[4] "The Quiet Orchard"')
    assert "Patterns from many users" in history_part and "M1. " in history_part
    assert [
        line[1 : line.index("]")] for line in candidate_part.splitlines() if line.startswith("[")
    ] == CANDIDATES
    schema = model.kwargs_seen[0]["extra_body"]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["ranked_item_ids"]["items"]["enum"] == CANDIDATES


def test_no_pool_ranks_without_memories_and_a_named_missing_pool_is_an_error(
    write_amem_dataset: Callable[..., Path], tmp_path: Path
) -> None:
    data = str(write_amem_dataset(tmp_path / "fresh", name="fresh"))
    out = graph.invoke({"user_id": "a", "candidates": CANDIDATES}, context=Amem4RecContext(dataset=data))
    assert "no trained pool at" in out["trace"][1]["content"] and out["details"]["memories_used"] == 0
    assert sorted(out["ranking"]) == sorted(CANDIDATES)
    with pytest.raises(PoolError, match="no AMEM4Rec pool at"):
        graph.invoke(
            {"user_id": "a"}, context=Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "nowhere"))
        )


def test_titles_only_catalog_trains_from_title_free_statistics(
    write_amem_dataset: Callable[..., Path], amem_histories: dict[str, list[str]], tmp_path: Path
) -> None:
    data = str(write_amem_dataset(tmp_path / "titles", name="titles", categories=False))
    ctx = Amem4RecContext(dataset=data, amem4rec_pool=str(tmp_path / "pool"))
    out = train_graph.invoke({"user_id": "a", "start": 0}, context=ctx)
    extract = next(m for m in out["trace"] if m["role"] == "extract")["content"]
    assert NO_CATEGORIES_NOTE in extract
    env = get_environment(data)
    train_pool(env, ctx, list(amem_histories), concurrency=2)
    pool = open_pool(Path(ctx.amem4rec_pool), env.dataset)
    texts = [m.text() for m in pool.memories().values()]
    assert texts and all(("popular" in t or "niche" in t) for t in texts)
    names = forbidden_names(env, [item for items in amem_histories.values() for item in items])
    assert not any(name.lower() in text.lower() for text in texts for name in names)
    ranked = graph.invoke({"user_id": "b", "candidates": CANDIDATES}, context=ctx)
    assert sorted(ranked["ranking"]) == sorted(CANDIDATES) and ranked["details"]["memories_used"] > 0


def test_both_graphs_run_async_and_show_their_branches(trained: Amem4RecContext) -> None:
    out = asyncio.run(graph.ainvoke({"user_id": "c", "candidates": CANDIDATES}, context=trained))
    assert sorted(out["ranking"]) == sorted(CANDIDATES)
    window = asyncio.run(train_graph.ainvoke({"user_id": "c", "start": 3}, context=trained))
    assert window["status"] == "already applied"
    edges = {(e.source, e.target, e.conditional) for e in train_graph.get_graph().edges}
    for branch in ("store_only", "update_and_store", "update_only"):
        assert ("similarity_validator", branch, True) in edges
    assert {("semantic_validator", "evolve", True), ("semantic_validator", "commit", True)} <= edges
    assert {"amem4rec", "amem4rec_no_evolution", "amem4rec_no_semantic", "amem4rec_no_similarity"} <= set(
        METHODS
    )
    assert "amem4rec_train" in SERVICE_GRAPHS
    assert get_graph("amem4rec_no_similarity").name == "amem4rec_no_similarity"


def test_queries_embedded_ahead_are_read_back_instead_of_embedded_per_user(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agents.amem4rec.retrieval as retrieval

    queries = ["Alpha Wars (Action, Sci-Fi); Gamma Quest (Action)", "Beta Love (Romance)"]
    alone = [retrieval.embed_texts([q])[0] for q in queries]
    monkeypatch.setattr(retrieval, "_query_vectors", {})
    monkeypatch.setattr(retrieval, "_query_files_read", set())
    assert retrieval.embed_queries([*queries, queries[0], ""], tmp_path) == 2  # each distinct text once
    assert retrieval.embed_queries(queries, tmp_path) == 0
    assert (tmp_path / retrieval.QUERY_FILE).is_file()

    def refuse(texts: list[str]) -> None:
        raise AssertionError(f"embedded again: {texts}")

    monkeypatch.setattr(retrieval, "embed_texts", refuse)
    for query, vector in zip(queries, alone, strict=True):
        assert np.abs(retrieval.query_vector(query) - vector).max() < 1e-5  # batched: float noise only
    # Another process (a `bench --workers` worker): nothing in memory, the pool folder's file is read.
    monkeypatch.setattr(retrieval, "_query_vectors", {})
    monkeypatch.setattr(retrieval, "_query_files_read", set())
    for query, vector in zip(queries, alone, strict=True):
        assert np.abs(retrieval.query_vector(query, tmp_path) - vector).max() < 1e-5
