"""CollaborativeSignal (item-kNN scores of the candidates from the visible history, rank-normalised, no
model asked) and the router's prepare hook (the prerequisites' own hooks, contexts composed)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.baselines.classic import score_bpr, score_itemknn
from agents.chainrec.online.evidence import percentile_ranks
from agents.chainrec.online.tool_agent import Episode
from agents.router.method_tools.collaborative import collaborative_signal
from graphs.hooks import Prepared, PrepareRequest
from graphs.router import prepare
from state.baselines.context import BaselinesContext
from state.chainrec.context import ChainRecContext
from state.router.context import RouterContext
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment
from world.errors import RecgraphError

CANDIDATES = ("50", "181", "1", "2", "3", "100", "258", "300", "12", "7")


def episode(user: str, scenario: str = "classic", ctx: ChainRecContext | None = None) -> Episode:
    scope = EpisodeScope(get_environment("ml-100k"), user, scenario)
    return Episode(scope, CANDIDATES, (), ctx or RouterContext())


def test_collaborative_signal_is_item_knn_over_the_visible_history_rank_normalised() -> None:
    env = get_environment("ml-100k")
    knn_only = RouterContext(router_collaborative="itemknn")
    for scenario in ("classic", "cold_user"):
        fetched = collaborative_signal(episode("7", scenario, knn_only))
        history = env.history("7", scenario)
        raw = score_itemknn(env, BaselinesContext(), "7", history, list(CANDIDATES), scenario)
        expected = np.round(percentile_ranks(raw), 4)
        assert [e.item_id for e in fetched.fallback.items] == list(CANDIDATES)
        assert [e.score for e in fetched.fallback.items] == list(expected)
        assert not fetched.needed and fetched.candidates == CANDIDATES
        assert fetched.stats["collaborative_items"] == len(history)
        assert fetched.stats["linked_candidates"] == int((raw > 1e-6).sum())


def test_by_default_collaborative_signal_averages_item_knn_and_bpr_ranks() -> None:
    env = get_environment("ml-100k")
    history = env.history("7", "classic")
    knobs = BaselinesContext()
    knn = percentile_ranks(score_itemknn(env, knobs, "7", history, list(CANDIDATES), "classic"))
    bpr = percentile_ranks(score_bpr(env, knobs, "7", history, list(CANDIDATES), "classic"))
    fetched = collaborative_signal(episode("7"))
    assert [e.score for e in fetched.fallback.items] == list(np.round((knn + bpr) / 2, 4))
    assert "itemknn+bpr rank" in fetched.fallback.items[0].note
    # ChainRec's context (no router knobs) scores the same way, with the baselines' defaults
    plain = collaborative_signal(episode("7", ctx=ChainRecContext()))
    assert plain.fallback == fetched.fallback


def test_collaborative_signal_refuses_an_unknown_scorer() -> None:
    with pytest.raises(RecgraphError, match="unknown router_collaborative scorer 'svd'"):
        collaborative_signal(episode("7", ctx=RouterContext(router_collaborative="itemknn,svd")))


def test_prepare_runs_each_prerequisite_s_own_hook_and_composes_the_contexts(
    monkeypatch, tmp_path: Path
) -> None:
    seen: list[tuple[str, RouterContext]] = []

    def memrec_hook(request: PrepareRequest) -> Prepared:
        seen.append(("memrec", request.context))  # type: ignore[arg-type]
        return Prepared(replace(request.context, memrec_memory="graph.sqlite"), {"stage_w": 1})

    def amem4rec_hook(request: PrepareRequest) -> Prepared:
        seen.append(("amem4rec", request.context))  # type: ignore[arg-type]
        return Prepared(replace(request.context, amem4rec_pool="pool"), {"training": 2})

    def trained_hook(request: PrepareRequest) -> Prepared:
        seen.append((request.method, request.context))  # type: ignore[arg-type]
        return Prepared(request.context, {"training": {"model": request.method}})

    def agentcf_hook(request: PrepareRequest) -> Prepared:
        seen.append(("agentcf", request.context))  # type: ignore[arg-type]
        return Prepared(replace(request.context, agentcf_memory="memories.json"), {"training": 3})

    hooks = {
        "graphs.agentcf.hooks:train_for_bench": agentcf_hook,
        "graphs.memrec.warmup:with_stage_w": memrec_hook,
        "graphs.amem4rec.hooks:train_for_bench": amem4rec_hook,
        "graphs.baselines.trained:train_for_bench": trained_hook,
    }
    monkeypatch.setattr(prepare, "resolve", lambda reference: hooks[reference])
    request = PrepareRequest("router", ["1"], "classic", {}, tmp_path, 1, RouterContext())
    done = prepare.prepare_for_bench(request)
    trained = ["sasrec", "gru4rec", "lightgcn"]
    assert [name for name, _ in seen] == ["memrec", "amem4rec", *trained, "agentcf"]
    assert seen[1][1].memrec_memory == "graph.sqlite"  # the second hook sees the first one's context
    assert isinstance(done.context, RouterContext)
    composed = done.context.memrec_memory, done.context.amem4rec_pool, done.context.agentcf_memory
    assert composed == ("graph.sqlite", "pool", "memories.json")
    assert done.metrics == {
        "prerequisites": {
            "memrec": {"stage_w": 1},
            "amem4rec": {"training": 2},
            **{name: {"training": {"model": name}} for name in trained},
            "agentcf": {"training": 3},
        }
    }
    bare = replace(request, context=RouterContext(router_method_tools=False))
    assert prepare.prepare_for_bench(bare).metrics == {} and len(seen) == 6
