"""SequentialSignal and GraphSignal: the baselines' trained SASRec, GRU4Rec and LightGCN as router
tools (rank-normalised scores, no model asked), unavailable until their baselines' prepare trained
them, masked per episode for a cold user or all-cold candidates, and the training world's own copies
that never learned an evaluated user's hidden interactions nor a training task's target.

The catalog is tests/baselines/test_trained.py's: item 99 only as `u0`'s validation target, item 98
only as `u1`'s test target, user `cold` with two items nobody else has."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.baselines.fitted import fitted_model, is_trained, model_file, model_scores
from agents.baselines.trained import training_data, with_cold_fallback
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.online.evidence import percentile_ranks
from agents.chainrec.online.tool_agent import Episode
from agents.router.catalog import METHOD_TOOLS, PREREQUISITES, router_catalog, router_costs, unavailable_tools
from agents.router.method_tools.graph_signal import graph_signal
from agents.router.method_tools.sequential_signal import model_names, sequential_signal
from graphs.hooks import PrepareRequest
from graphs.router.ahead_parts import WORLD_MEMORIES, ahead_parts
from graphs.router.learned import training_world_models
from graphs.router.prepare import prerequisites
from state.baselines.context import BaselinesContext
from state.router.context import RouterContext
from tests.baselines.test_trained import SMALL, write_catalog
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment
from world.errors import RecgraphError

WARM = ("3", "5", "7", "9", "11", "13", "98", "99")
"""Candidates: six warm items and the two planted ones (cold: no training interaction)."""


@pytest.fixture
def catalog(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The catalog, with an empty cache folder."""
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    return write_catalog(tmp_path / "small")


def router_context(dataset: str, **more: object) -> RouterContext:
    """Small model knobs (each trains in about a second)."""
    return RouterContext(dataset=dataset, **{"seed": 3, **SMALL, **more})


def episode(dataset: str, user: str, candidates: tuple[str, ...], ctx: RouterContext) -> Episode:
    return Episode(EpisodeScope(get_environment(dataset), user, "classic"), candidates, (), ctx)


def test_unavailable_until_trained_then_scores_are_the_models_ranks(catalog: str) -> None:
    env = get_environment(catalog)
    ctx = router_context(catalog)
    tools = router_catalog(ctx)
    before = unavailable_tools(env, ctx, tools)
    assert "SASRec, GRU4Rec not trained for small" in before["SequentialSignal"]
    assert "`recgraph bench --methods sasrec,gru4rec`" in before["SequentialSignal"]
    assert "LightGCN not trained" in before["GraphSignal"]
    knobs = BaselinesContext(dataset=catalog, **{"seed": 3, **SMALL})
    for name in ("sasrec", "gru4rec", "lightgcn"):
        fitted_model(env, knobs, name)
    after = unavailable_tools(env, ctx, tools)
    assert "SequentialSignal" not in after and "GraphSignal" not in after
    history = env.history("u5", "classic")
    for fetch, models in ((sequential_signal, ("sasrec", "gru4rec")), (graph_signal, ("lightgcn",))):
        fetched = fetch(episode(catalog, "u5", WARM, ctx))
        ranks = [
            percentile_ranks(
                with_cold_fallback(env, WARM, model_scores(env, knobs, m, "u5", history, WARM, "classic"))
            )
            for m in models
        ]
        expected = np.round(np.mean(ranks, axis=0), 4)
        assert [e.item_id for e in fetched.fallback.items] == list(WARM)
        assert [e.score for e in fetched.fallback.items] == list(expected)
        assert not fetched.needed and fetched.stats["cold_candidates"] == 2  # 98 and 99
        low = {e.item_id for e in fetched.fallback.items if e.score <= 1 / 7}
        assert low == {"98", "99"}  # the cold candidates ranked after every warm one
    assert router_costs(ctx)["SequentialSignal"].calls == router_costs(ctx)["GraphSignal"].calls == 0


def test_a_cold_user_or_all_cold_candidates_mask_the_tools_for_that_episode(catalog: str) -> None:
    env = get_environment(catalog)
    ctx = router_context(catalog)
    knobs = BaselinesContext(dataset=catalog, **{"seed": 3, **SMALL})
    for name in ("sasrec", "gru4rec", "lightgcn"):
        fitted_model(env, knobs, name)
    tools = router_catalog(ctx)
    warm = {"history": env.history("u5", "classic"), "candidates": list(WARM)}
    assert not {"SequentialSignal", "GraphSignal"} & set(unavailable_tools(env, ctx, tools, warm))
    cold_user = {"history": ["97", "96"], "candidates": list(WARM)}
    masked = unavailable_tools(env, ctx, tools, cold_user)
    assert masked["SequentialSignal"].startswith("cold user") and masked["GraphSignal"].startswith(
        "cold user"
    )
    cold_items = {"history": env.history("u5", "classic"), "candidates": ["98", "99", "97"]}
    assert unavailable_tools(env, ctx, tools, cold_items)["GraphSignal"].startswith("every candidate is cold")


def test_the_router_prepares_the_baselines_models_and_names_them_by_knob(catalog: str) -> None:
    ctx = router_context(catalog)
    assert {"SequentialSignal", "GraphSignal"} <= {spec.name for spec in METHOD_TOOLS}
    assert PREREQUISITES["SequentialSignal"] == ("sasrec", "gru4rec")
    assert {"sasrec", "gru4rec", "lightgcn"} <= set(prerequisites(ctx))
    assert model_names(router_context(catalog, router_sequential="gru4rec")) == ("gru4rec",)
    with pytest.raises(RecgraphError, match="unknown router_sequential model 'bert4rec'"):
        model_names(router_context(catalog, router_sequential="bert4rec"))


def test_training_world_models_never_learn_a_hidden_item_or_a_training_target(catalog: str) -> None:
    """Planted: 99 (u0's validation) and 98 (u1's test) are in neither world's training data; the
    training world's copies also leave out each training task's target (the bench world's last
    training item), which the bench models learned."""
    env = get_environment(catalog)
    ctx = router_context(catalog)
    figures = training_world_models(ctx)
    assert set(figures) == {"sasrec", "gru4rec", "lightgcn"} and not any(
        f["reused"] for f in figures.values()
    )
    train_env = training_environment(env)
    bench_rows = training_data(env).sequences
    world_rows = training_data(train_env).sequences
    planted = {env.item_index["99"], env.item_index["98"]}
    for rows, world in ((bench_rows, env), (world_rows, train_env)):
        seen = {world.item_ids[i] for items in rows.values() for i in items}
        assert not {"98", "99"} & seen, world.dataset.name
    assert not planted & {i for items in bench_rows.values() for i in items}
    shared = [u for u in world_rows if u in bench_rows and train_env.cases[u].valid is not None]
    assert shared
    for user in shared:  # the training world drops the task's target and its validation item
        case = train_env.cases[user]
        assert world_rows[user] == bench_rows[user][:-2]
        assert bench_rows[user][-1] == env.item_index[case.target.item_id]  # the bench models learned it
    knobs = BaselinesContext(dataset=catalog, **{"seed": 3, **SMALL})
    assert training_world_models(ctx) == figures  # the process's models, not trained again
    assert all(is_trained(train_env, knobs, name) for name in figures)  # and saved in its own cache
    assert not any(is_trained(env, knobs, name) for name in figures)  # the bench world's: untouched


def test_the_training_world_models_are_parts_of_the_planners_step(catalog: str) -> None:
    """`ahead_parts`: one part per model the planner's tools read, each training only its model into
    the training world's cache (never the bench world's); the planner's step then reads them."""
    env = get_environment(catalog)
    train_env = training_environment(env)
    ctx = router_context(catalog)
    knobs = BaselinesContext(dataset=catalog, **{"seed": 3, **SMALL})
    parts = [p for p in ahead_parts(ctx) if p.name != WORLD_MEMORIES]  # tests/router/test_world_memories.py
    assert [p.name for p in parts] == [
        "training-world sasrec",
        "training-world gru4rec",
        "training-world lightgcn",
    ]
    assert [p.name for p in ahead_parts(router_context(catalog, router_sequential="gru4rec"))] == [
        "training-world gru4rec", "training-world lightgcn", WORLD_MEMORIES
    ]  # fmt: skip
    assert ahead_parts(router_context(catalog, router_method_tools=False)) == []  # no method tool
    request = PrepareRequest("router_learned", [], "classic", {}, Path(catalog), 1, ctx)
    parts[1].run(request)
    trained = [name for name in ("sasrec", "gru4rec", "lightgcn") if is_trained(train_env, knobs, name)]
    assert trained == ["gru4rec"] and not is_trained(env, knobs, "gru4rec")
    for part in parts:
        part.run(request)
    files = {name: model_file(train_env, knobs, name) for name in ("sasrec", "gru4rec", "lightgcn")}
    written = {name: path.stat().st_mtime_ns for name, path in files.items()}
    for part in parts:  # a part finding its model in the cache trains nothing
        part.run(request)
    assert {name: path.stat().st_mtime_ns for name, path in files.items()} == written
    assert set(training_world_models(ctx)) == set(files)
