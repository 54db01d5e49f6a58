"""The router's method tools (MemoryNeighbourhood, PatternMemories, IntentEvidence): their fallbacks
are the wrapped methods' own heuristic scores for a real user, in [0, 1], deterministic and blind to
the held-out target; `unavailable` says what is missing and how to make it; the LLM path keeps a
valid answer, repairs a partial one and falls back (retries recorded) on garbage."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.arag.signals import fused_scores, heuristic_nli
from agents.base import run_agent
from agents.chainrec.online.tool_agent import Episode, Fetched, tool_task
from agents.router.method_tools import intent_evidence as ie
from agents.router.method_tools import memory_neighbourhood as mn
from agents.router.method_tools import pattern_memories as pm
from agents.router.method_tools.support import fetched_cost
from graphs.amem4rec.graph import graph as amem4rec_graph
from graphs.amem4rec.training import train_pool
from graphs.memrec.graph import graph as memrec_graph
from state.router.context import RouterContext
from tests.fakes import ScriptedChatModel, install
from tools.chainrec.episode_corpus import Corpus
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment

USER = "1"


def episode(ctx: RouterContext, user: str, candidates: list[str], scenario: str = "classic") -> Episode:
    return Episode(EpisodeScope(get_environment(ctx.dataset), user, scenario), tuple(candidates), (), ctx)


def ml_candidates() -> list[str]:
    """User 1's held-out test item first, then the nine most popular items user 1 never rated."""
    env = get_environment("ml-100k")
    seen = env.interacted(USER)
    others = sorted((i for i in env.item_ids if i not in seen), key=lambda i: -env.popularity.get(i, 0))
    return [env.cases[USER].target.item_id, *others[:9]]


def check_fallback(fetched: Fetched, candidates: list[str]) -> dict[str, float]:
    """One entry per candidate, in order, scores in [0, 1]; returns the scores."""
    items = fetched.fallback.items
    assert [e.item_id for e in items] == candidates and fetched.candidates == tuple(candidates)
    assert all(0.0 <= e.score <= 1.0 for e in items)
    assert fetched.fallback.facets and fetched.fallback.summary
    assert fetched.data.count(f"[{candidates[0]}]") == 1  # the target shows as a candidate only
    return {e.item_id: e.score for e in items}


def test_memory_neighbourhood_scores_are_memrecs_heuristic_blend() -> None:
    ctx, candidates = RouterContext(), ml_candidates()
    fetched = mn.memory_neighbourhood(episode(ctx, USER, candidates))
    scores = check_fallback(fetched, candidates)
    again = mn.memory_neighbourhood(episode(ctx, USER, candidates))
    assert again.fallback == fetched.fallback and again.data == fetched.data
    # MemRec's rerank on the heuristic backend answers with its heuristic blend fallback.
    blend = replace(ctx, memrec_ranker="llm", llm="heuristic")
    out = memrec_graph.invoke({"user_id": USER, "candidates": candidates}, context=blend)
    assert scores == pytest.approx({c: round(s, 4) for c, s in out["scores"].items()}, abs=1e-9)
    assert fetched.needed and fetched.stats["curated_neighbours"] == ctx.memrec_k
    target = candidates[0]
    assert f"i:{target}" not in fetched.data and "The user's memory: \"History of" in fetched.data
    assert fetched.fallback.facets[0].key == "neighbourhood" and 0 < fetched.fallback.confidence <= 0.6


def test_memory_neighbourhood_withholds_the_user_memory_when_the_scenario_hides_history() -> None:
    ctx, candidates = RouterContext(), ml_candidates()
    fetched = mn.memory_neighbourhood(episode(ctx, USER, candidates, "cold_user"))
    check_fallback(fetched, candidates)
    assert "The user's memory: (withheld" in fetched.data and "History of" not in fetched.data
    assert fetched.notes == ("user memory withheld: it summarises history this scenario hides",)
    visible = {f"i:{i}" for i in get_environment("ml-100k").history(USER, "cold_user")}
    curated_items = {line.split()[1] for line in fetched.data.splitlines() if line.startswith("- i:")}
    assert curated_items <= visible  # the user's own 1-hop items are the visible ones only


def test_memory_neighbourhood_unavailable_names_what_is_missing(tmp_path: Path) -> None:
    env = get_environment("ml-100k")
    assert mn.unavailable(env, RouterContext()) is None
    missing = tmp_path / "nowhere.sqlite"
    reason = mn.unavailable(env, RouterContext(memrec_memory=str(missing)))
    assert reason is not None and str(missing) in reason and "recgraph memrec init" in reason
    off = mn.unavailable(env, RouterContext(memrec_use_read=False))
    assert off is not None and "memrec_use_read=False" in off
    assert mn.PREREQUISITE == "memrec" and mn.BLOCKING


@pytest.fixture
def shape(tmp_path: Path, write_shape: Callable[..., Path]) -> str:
    return str(write_shape(tmp_path / "shape", "full"))


@pytest.fixture
def trained(shape: str, tmp_path: Path) -> RouterContext:
    ctx = RouterContext(dataset=shape, amem4rec_pool=str(tmp_path / "pool"))
    train_pool(get_environment(shape), ctx, ["a", "b", "c", "d"], concurrency=2)
    return ctx


def leaky_events(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the episode's visible history end with the held-out test interaction (a leak)."""
    real = Corpus.visible_events

    def with_target(self: Corpus, user_id: str, scenario: str) -> list:
        return [*real(self, user_id, scenario), self.env.cases[user_id].target]

    monkeypatch.setattr(Corpus, "visible_events", with_target)


def test_pattern_memories_scores_are_amem4recs_ranker_fallback(
    trained: RouterContext, shape_candidates: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    candidates = shape_candidates["a"]  # "9", a's test item, first
    fetched = pm.pattern_memories(episode(trained, "a", candidates))
    scores = check_fallback(fetched, candidates)
    assert pm.pattern_memories(episode(trained, "a", candidates)).fallback == fetched.fallback
    out = amem4rec_graph.invoke({"user_id": "a", "candidates": candidates}, context=trained)
    expected = {c: round(min(max(s, 0.0), 1.0), 4) for c, s in out["scores"].items()}
    assert scores == pytest.approx(expected, abs=1e-9)
    assert fetched.needed and fetched.stats["retrieved_memories"] == min(5, fetched.stats["pool_size"])
    assert "M1. (similarity" in fetched.data
    leaky_events(monkeypatch)
    leaky = pm.pattern_memories(episode(trained, "a", candidates))
    leaked = {e.item_id: e.score for e in leaky.fallback.items}
    assert leaked["9"] > scores["9"] and leaky.data.count("[9]") == 2  # what a leak would look like


def test_pattern_memories_unavailable_without_a_trained_pool(shape: str, tmp_path: Path) -> None:
    env = get_environment(shape)
    ctx = RouterContext(dataset=shape, amem4rec_pool=str(tmp_path / "pool"))
    reason = pm.unavailable(env, ctx)
    assert reason is not None and "no trained AMEM4Rec pool" in reason and "recgraph amem4rec train" in reason
    train_pool(env, ctx, ["a", "b"], concurrency=1)
    assert pm.unavailable(env, ctx) is None and pm.PREREQUISITE == "amem4rec"


def test_pattern_memories_without_a_pool_asks_no_model(shape: str, shape_candidates: dict) -> None:
    fetched = pm.pattern_memories(episode(RouterContext(dataset=shape), "a", shape_candidates["a"]))
    check_fallback(fetched, shape_candidates["a"])
    assert not fetched.needed and fetched.notes and "no trained pool" in fetched.notes[0]
    assert fetched_cost(pm.SPEC, fetched).tokens(5) == 0


def test_intent_evidence_scores_are_arags_nli(
    shape: str, shape_candidates: dict[str, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx, candidates = RouterContext(dataset=shape), shape_candidates["b"]
    env = get_environment(shape)
    fetched = ie.intent_evidence(episode(ctx, "b", candidates))
    scores = check_fallback(fetched, candidates)
    nli = heuristic_nli(env, env.history("b"), candidates, ctx.arag_session_items)
    assert scores == pytest.approx({c: round(nli[c][0] / 10, 4) for c in candidates}, abs=1e-9)
    assert ie.intent_evidence(episode(ctx, "b", candidates)).fallback == fetched.fallback
    keys = [f.key for f in fetched.fallback.facets]
    assert keys == [
        "long_term",
        "session_intent",
        "supporting_candidates",
        "best_supported",
        "context_summary",
    ]
    plain = replace(ctx, arag_use_nli=False, arag_use_csa=False)
    without = check_fallback(ie.intent_evidence(episode(plain, "b", candidates)), candidates)
    session = fused_scores(env, env.history("b"), candidates, ctx.arag_session_items, None)[0]
    assert without == pytest.approx(
        {c: round(float(s), 4) for c, s in zip(candidates, session, strict=True)}, abs=1e-9
    )
    leaky_events(monkeypatch)
    leaky = ie.intent_evidence(episode(ctx, "b", candidates))
    leaked = {e.item_id: e.score for e in leaky.fallback.items}
    assert leaked["7"] != scores["7"] and leaky.data.count("[7]") == 2  # b's test item: a leak would show
    assert ie.unavailable(env, ctx) is None and ie.PREREQUISITE is None and not ie.BLOCKING


def test_costs_count_one_call_follow_the_knobs_and_match_a_fetch() -> None:
    ctx = RouterContext()
    base = mn.cost(ctx)
    assert base.calls == 1 and mn.cost(replace(ctx, memrec_k=32)).tokens(20) - base.tokens(20) == 400
    assert mn.cost(replace(ctx, memrec_token_budget=100)).tokens(20) < base.tokens(20)  # tau caps it
    assert pm.cost(replace(ctx, amem4rec_top_k=10)).tokens(20) > pm.cost(ctx).tokens(20)
    assert ie.cost(ctx).tokens(20) > ie.cost(ctx).tokens(10) > 0
    fetched = mn.memory_neighbourhood(episode(ctx, USER, ml_candidates()))
    spent = fetched_cost(mn.SPEC, fetched)
    assert spent.calls == 1 and abs(spent.tokens(10) - base.tokens(10)) < 0.25 * base.tokens(10)


def answer(items: list[dict], **fields: object) -> str:
    base = {"facets": [{"key": "intent", "value": "darker dramas"}], "confidence": 0.7, "summary": "ok"}
    return json.dumps({**base, **fields, "items": items})


def test_llm_answer_is_kept_and_repaired(
    monkeypatch: pytest.MonkeyPatch, shape: str, shape_candidates: dict[str, list[str]]
) -> None:
    candidates = shape_candidates["b"]
    ctx = RouterContext(dataset=shape, llm="openai:gpt-4o-mini", llm_retries=1)
    ep = episode(ctx, "b", candidates)
    fetched = ie.intent_evidence(ep)
    entries = [{"item_id": c, "score": 0.9, "note": "fits"} for c in candidates[:-1]]
    entries.append({"item_id": "nope", "score": 0.2, "note": "ghost"})
    model = install(monkeypatch, ScriptedChatModel(script=[answer(entries)]))
    result = run_agent(tool_task(ie.SPEC, fetched, ep), ctx)
    assert result.usage.source == "llm" and result.usage.attempts == 1
    assert result.usage.repair_kinds == {"unknown_id": 1, "missing_id": 1}
    last = fetched.fallback.items[-1]
    assert result.output.items[-1] == last and [e.score for e in result.output.items[:-1]] == [0.9] * 4
    prompt = str(model.received[0][-1].content)
    assert "ARAG's user understanding" in prompt and "<data>" in prompt


def test_garbage_falls_back_after_the_retry(monkeypatch: pytest.MonkeyPatch) -> None:
    candidates = ml_candidates()
    ctx = RouterContext(llm="openai:gpt-4o-mini", llm_retries=1)
    ep = episode(ctx, USER, candidates)
    fetched = mn.memory_neighbourhood(ep)
    ghosts = answer([{"item_id": "x1", "score": 0.5, "note": ""}])
    model = install(monkeypatch, ScriptedChatModel(script=["the best is Fargo", ghosts]))
    result = run_agent(tool_task(mn.SPEC, fetched, ep), ctx)
    assert result.usage.source == "fallback" and result.output == fetched.fallback
    assert result.usage.attempts == 2 and result.usage.errors == {"malformed_json": 1, "no_valid_ids": 1}
    retry = str(model.received[1][-1].content)
    assert retry.startswith("Your previous answer was rejected: the answer is not valid JSON")
    assert np.isclose(sum(e.score for e in result.output.items), sum(e.score for e in fetched.fallback.items))


def test_a_titles_only_catalog_still_gets_one_score_per_candidate(
    tmp_path: Path, write_shape: Callable[..., Path], shape_candidates: dict[str, list[str]]
) -> None:
    dataset = str(write_shape(tmp_path / "bare", "titles_only"))
    ctx = RouterContext(dataset=dataset, amem4rec_pool=str(tmp_path / "pool"))
    train_pool(get_environment(dataset), ctx, ["a", "b", "c"], concurrency=1)
    candidates = shape_candidates["c"]
    fetches = {
        "MemoryNeighbourhood": mn.memory_neighbourhood,
        "PatternMemories": pm.pattern_memories,
        "IntentEvidence": ie.intent_evidence,
    }
    for name, fetch in fetches.items():
        fetched = fetch(episode(ctx, "c", candidates))
        scores = check_fallback(fetched, candidates)
        assert len(set(scores.values())) > 1, name  # the scores tell the candidates apart
    assert "no categories: facets are titles" in mn.memory_neighbourhood(episode(ctx, "c", candidates)).notes


def test_intent_evidence_splits_the_session_as_arag_does() -> None:
    """ml-100k user 10's last 5 items span more than a day: ARAG's session C_st (split by time,
    `session_context`) holds 2 of them, and so does IntentEvidence's, not the last 5 by position."""
    from agents.arag.signals import session_context
    from state.arag.context import AragContext

    ctx, env, user = RouterContext(), get_environment("ml-100k"), "10"
    history = env.history(user)
    arag = session_context(AragContext(), env, user, history)
    assert arag.arag_session_items == 2 < ctx.arag_session_items
    fetched = ie.intent_evidence(episode(ctx, user, ml_candidates()))
    assert fetched.stats["session_items"] == 2
    assert f"{len(history) - 2} earlier items, a session of 2" in fetched.data
