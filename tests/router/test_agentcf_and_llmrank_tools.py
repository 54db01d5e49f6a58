"""AgentMemories (AgentCF's trained memories as evidence) and RecencyRanking (LLMRank's recency-focused
view as evidence): scores equal to their methods' own fallbacks, rank-normalised; what they need and
what they cost; a planted held-out item reaches no memory the router shows."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.agentcf.rank import fallback_scores
from agents.agentcf.recall import item_memories
from agents.baselines.llmrank import recency_profile
from agents.chainrec.online.evidence import percentile_ranks
from agents.chainrec.online.tool_agent import Episode
from agents.router.catalog import unavailable_tools
from agents.router.method_tools import recency_ranking as recency_module
from agents.router.method_tools.agent_memories import NAME as AGENT_MEMORIES
from agents.router.method_tools.agent_memories import agent_memories, unavailable
from agents.router.method_tools.agent_memories import cost as agent_cost
from agents.router.method_tools.recency_ranking import cost as recency_cost
from agents.router.method_tools.recency_ranking import recency_ranking
from graphs.agentcf.training import train_memories
from state.router.context import RouterContext
from tests.agentcf.conftest import PLANTED, PLANTED_TITLE, write_planted
from tools.agentcf.store import load
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment

CANDIDATES = ("50", "181", "1", "2", "3", "100", "258", "300", "12", "7")


def episode(
    dataset: str, user: str, candidates: tuple[str, ...], ctx: RouterContext, scenario: str = "classic"
) -> Episode:
    return Episode(EpisodeScope(get_environment(dataset), user, scenario), candidates, (), ctx)


@pytest.fixture
def trained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RouterContext:
    """A router context whose `agentcf_memory` holds heuristic memories trained for users 7 and 42."""
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    ctx = RouterContext(dataset="ml-100k")
    run = train_memories(get_environment("ml-100k"), ctx, ["7", "42"], concurrency=1)
    return RouterContext(dataset="ml-100k", agentcf_memory=str(run.path))


def test_agent_memories_needs_trained_memories_and_scores_as_agentcf_s_fallback(
    trained: RouterContext,
) -> None:
    env = get_environment("ml-100k")
    assert unavailable(env, RouterContext()).startswith("no AgentCF memories for ml-100k")
    assert "no AgentCF memories file at /nowhere.json" in unavailable(
        env, RouterContext(agentcf_memory="/nowhere.json")
    )
    assert unavailable(env, trained) is None
    assert AGENT_MEMORIES not in unavailable_tools(env, trained, ())  # only the catalog's tools count
    fetched = agent_memories(episode("ml-100k", "7", CANDIDATES, trained))
    memories = load(Path(trained.agentcf_memory))
    memory = memories.users["7"]
    raw = fallback_scores(env, trained, memory, item_memories(env, memories, CANDIDATES), CANDIDATES,
                          env.history("7", "classic"), [])  # fmt: skip
    expected = np.round(percentile_ranks([raw[c] for c in CANDIDATES]), 4)
    assert [e.item_id for e in fetched.fallback.items] == list(CANDIDATES)
    assert [e.score for e in fetched.fallback.items] == list(expected)
    assert fetched.needed and fetched.notes == () and "(trained)" in fetched.data
    assert memory[:40] in fetched.data  # the user agent's own self-description, quoted


def test_agent_memories_never_shows_a_memory_of_history_the_scenario_hides(trained: RouterContext) -> None:
    fetched = agent_memories(episode("ml-100k", "7", CANDIDATES, trained, "cold_user"))
    assert fetched.notes == (
        "user memory from the visible history: this scenario hides part of the history it summarises",
    )
    assert load(Path(trained.agentcf_memory)).users["7"][:40] not in fetched.data
    untrained = agent_memories(episode("ml-100k", "1", CANDIDATES, trained))
    assert untrained.notes == ("user memory from the visible history: no trained memory",)


def test_agent_memories_planned_cost_grows_with_the_memory_knobs() -> None:
    small, large = agent_cost(RouterContext(agentcf_item_chars=100)), agent_cost(RouterContext())
    assert small.calls == large.calls == 1
    assert large.tokens(10) - small.tokens(10) == 10 * (320 - 100) // 4


def test_a_planted_held_out_item_reaches_no_memory_agent_memories_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    dataset = str(write_planted(tmp_path / "planted"))
    env = get_environment(dataset)
    ctx = RouterContext(dataset=dataset, agentcf_interactions_per_user=0)
    run = train_memories(env, ctx, ["a", "b", "c", "d", "e", "f"], concurrency=1)
    trained = RouterContext(dataset=dataset, agentcf_memory=str(run.path))
    others = tuple(i for i in env.item_ids if i != PLANTED)[:5]
    for user in ("b", "c", "d"):
        fetched = agent_memories(episode(dataset, user, others, trained))
        assert PLANTED_TITLE.lower() not in fetched.data.lower() and "mystery" not in fetched.data.lower()


def test_recency_ranking_is_llmrank_s_recency_fallback_rank_normalised() -> None:
    env = get_environment("ml-100k")
    ctx = RouterContext(llmrank_history_items=5)
    fetched = recency_ranking(episode("ml-100k", "7", CANDIDATES, ctx))
    shown = env.history("7", "classic")[-5:]
    vectors = env.item_vectors()
    profile = vectors[[env.item_index[i] for i in recency_profile(shown)]].mean(axis=0)
    profile /= np.linalg.norm(profile)
    cosine = vectors[[env.item_index[c] for c in CANDIDATES]] @ profile
    assert [e.score for e in fetched.fallback.items] == list(np.round(percentile_ranks(cosine), 4))
    assert fetched.needed and fetched.data.count("\n1. ") == 1 and "\n5. " in fetched.data
    assert env.dataset.items[shown[-1]].title in fetched.data.split("The most recent interaction")[1]


def test_recency_ranking_without_visible_history_asks_no_model_and_plans_by_history_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(recency_module, "visible_items", lambda episode: [])
    fetched = recency_ranking(episode("ml-100k", "7", CANDIDATES, RouterContext()))
    env = get_environment("ml-100k")
    popularity = [env.popularity.get(c, 0) for c in CANDIDATES]
    assert [e.score for e in fetched.fallback.items] == list(np.round(percentile_ranks(popularity), 4))
    assert not fetched.needed and fetched.fallback.confidence == 0.1
    full, short = recency_cost(RouterContext()), recency_cost(RouterContext(llmrank_history_items=10))
    assert full.tokens(10) - short.tokens(10) == 40 * 60 // 4
