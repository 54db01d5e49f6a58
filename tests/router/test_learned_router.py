"""The learned router: its checkpoint plans over the router's catalog (PatternMemories masked in
training, with why), training is deterministic, no training task's target or test item is visible to
the method tools in the training world, and without a checkpoint the planner refuses in one line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from agents.chainrec.offline.policy_train import TrainConfig
from agents.chainrec.offline.rollout import with_cost
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import training_tasks
from agents.chainrec.offline.trajectories import read_rows
from agents.chainrec.online.learned_catalog import CatalogLearnedPlanner, catalog_root
from agents.chainrec.online.learned_planner import MissingCheckpoint
from agents.chainrec.online.policy import PolicyWeights
from agents.memrec.feature_index import feature_index
from agents.router.catalog import ROUTER_TOOLS
from agents.router.method_tools.pattern_memories import NAME as PATTERN_MEMORIES
from graphs.registry import get_graph
from graphs.router.learned import MASKED, ensure_router_checkpoint, trajectory_config
from graphs.router.prepare import prepare_for_bench
from state.router.context import RouterContext
from tests.baselines.test_trained import SMALL
from world.environment import get_environment

TINY = TrainConfig(hidden=8, sft_epochs=20, dpo_epochs=5, eval_every=10)
CONTEXT = RouterContext(
    dataset="ml-100k", chainrec_planner="learned", chainrec_train_tasks=3, chainrec_chain_cap=30, **SMALL
)
"""Three training tasks; the training world's SASRec, GRU4Rec and LightGCN small (seconds to train)."""


def train_in(root: Path):  # type: ignore[no-untyped-def]
    config = trajectory_config(CONTEXT, {"candidates": 6, "seed": 0}, "classic")
    return ensure_router_checkpoint(CONTEXT, config, TINY, root=root)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    return train_in(tmp_path_factory.mktemp("router_planner"))


def test_checkpoint_plans_over_the_router_catalog_without_pattern_memories(trained) -> None:  # type: ignore[no-untyped-def]
    config = json.loads((trained.folder / "config.json").read_text(encoding="utf-8"))
    assert config["actions"] == [spec.name for spec in ROUTER_TOOLS]
    assert config["masked_tools"] == MASKED
    assert config["trajectories"]["cost_lam"] == CONTEXT.router_cost_lambda
    rows = read_rows(trained.trajectories.path)
    assert len(rows) == 3 and all(PATTERN_MEMORIES not in row["tools"] for row in rows)
    assert all("CollaborativeSignal" in row["tools"] for row in rows)
    # every row's tokens are the planned ones, so R(τ) carries the cost term
    row = rows[0]
    assert row["tool_tokens"]["CollaborativeSignal"] == 0 and row["tool_tokens"]["LongTermPreference"] > 0
    evaluation = json.loads((trained.folder / "evaluation.json").read_text(encoding="utf-8"))
    assert {"fixed", "best_fixed", "rule", "sft", "learned", "oracle"} <= set(evaluation["planners"])
    assert evaluation["masked_tools"] == MASKED


def test_reuse_and_training_twice_give_the_same_weights(trained, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert train_in(trained.folder.parent).reused
    again = train_in(tmp_path)
    assert not again.reused and again.folder.name == trained.folder.name
    for stage in ("sft", "dpo"):
        first, second = (PolicyWeights.load(f / f"{stage}.npz") for f in (trained.folder, again.folder))
        for a, b in zip(
            (first.w1, first.b1, first.w2, first.b2),
            (second.w1, second.b1, second.w2, second.b2),
            strict=True,
        ):
            assert np.array_equal(a, b)


def test_training_world_tools_never_see_a_target_or_test_item(trained) -> None:  # type: ignore[no-untyped-def]
    full = get_environment("ml-100k")
    train = training_environment(full)
    index = feature_index(train, "")  # the memory graph MemoryNeighbourhood reads in training
    config = trajectory_config(CONTEXT, {"candidates": 6, "seed": 0}, "classic")
    for task in training_tasks(train, full, config):
        u = train.user_index[task.user_id]
        edges = {
            train.item_ids[i]
            for i in index.graph.user_items[index.graph.user_ptr[u] : index.graph.user_ptr[u + 1]]
        }
        test_item = full.cases[task.user_id].target.item_id
        assert task.target not in edges and test_item not in edges
        assert test_item not in {event.item_id for event in train.cases[task.user_id].history}
        assert task.target == train.cases[task.user_id].target.item_id


def test_without_a_checkpoint_the_learned_router_refuses_in_one_line() -> None:
    """As in Studio (no `chainrec_checkpoint`, nothing trained for the scenario): one line saying how
    to train one; ChainRec's checkpoints (another catalog, another folder) are never borrowed."""
    context = RouterContext(dataset="ml-100k", chainrec_planner="learned")
    root = catalog_root("ml-100k", ROUTER_TOOLS)
    assert root.name.startswith("catalog_planner-17-") and root.name != "chainrec_planner"
    if (root / "latest.json").is_file() and '"all"' in (root / "latest.json").read_text():
        pytest.skip("this cache holds a router checkpoint over every scenario")
    expected = (
        "no learned planner checkpoint for ml-100k (all): train one with `recgraph chainrec train "
        "--library router --dataset ml-100k --scope run --scenario cold_item` (over the router's "
        "17-action catalog; `recgraph bench --methods router_learned` trains one too), or set "
        "chainrec_checkpoint"
    )
    with pytest.raises(MissingCheckpoint) as refused:
        CatalogLearnedPlanner(context, ROUTER_TOOLS).checkpoint("cold_item")
    assert str(refused.value) == expected
    request = {"user_id": "7", "candidates": ["50", "181", "1", "2", "3"], "scenario": "cold_item"}
    with pytest.raises(MissingCheckpoint) as refused:
        get_graph("router_learned").invoke(request, context=context)
    assert str(refused.value) == expected


def test_prepare_names_the_checkpoint_it_trained(trained, monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from graphs.hooks import PrepareRequest
    from graphs.router import learned

    monkeypatch.setattr(learned, "catalog_root", lambda dataset, catalog: trained.folder.parent)
    monkeypatch.setattr(learned, "train_config", lambda context, seed: TINY)
    monkeypatch.setattr("graphs.router.prepare.prerequisites", lambda context: [])
    request = PrepareRequest(
        "router_learned", [], "classic", {"candidates": 6, "seed": 0}, tmp_path, 1, CONTEXT
    )
    prepared = prepare_for_bench(request)
    assert prepared.context.chainrec_checkpoint == str(trained.folder)
    summary = prepared.metrics["planner_training"]
    assert summary["reused"] and summary["masked_tools"] == MASKED and summary["trajectory_tasks"] == 3


def test_the_learned_router_never_picks_a_tool_its_trajectories_masked(trained) -> None:  # type: ignore[no-untyped-def]
    """PatternMemories feasible at serving time still gets no probability: it was never learned."""
    from agents.chainrec.online.learned_planner import LearnedPlanner
    from agents.chainrec.online.planning import PlanView
    from agents.chainrec.online.policy import load_checkpoint

    context = replace(CONTEXT, chainrec_checkpoint=str(trained.folder))
    mask = {
        spec.name: spec.name not in ("AuthorPreference", "GeoContext", "CandidateRank")
        for spec in ROUTER_TOOLS
    }
    env = get_environment("ml-100k")
    candidates = tuple(env.item_ids[:6])
    view = PlanView("7", candidates, "classic", (), mask, {}, 6, {"categories": True}, ROUTER_TOOLS)
    unmasked = LearnedPlanner.probabilities(
        CatalogLearnedPlanner(context, ROUTER_TOOLS), load_checkpoint(trained.folder, "dpo"), view
    )
    assert unmasked[PATTERN_MEMORIES] > 0  # the raw policy would give it some probability
    choice = CatalogLearnedPlanner(context, ROUTER_TOOLS).decide(view)
    assert choice.action != PATTERN_MEMORIES and PATTERN_MEMORIES not in choice.scores
    assert set(choice.scores) == {name for name, ok in mask.items() if ok} - set(MASKED)


def test_every_cost_weight_trains_on_one_trajectory_set(trained) -> None:  # type: ignore[no-untyped-def]
    free = replace(CONTEXT, router_cost_lambda=0.0)
    config = trajectory_config(free, {"candidates": 6, "seed": 0}, "classic")
    other = ensure_router_checkpoint(free, config, TINY, root=trained.folder.parent)
    assert other.folder != trained.folder  # its own checkpoint ...
    assert other.trajectories.path == trained.trajectories.path  # ... on the same trajectories
    saved = json.loads((other.folder / "config.json").read_text(encoding="utf-8"))
    assert saved["trajectories"]["cost_lam"] == 0.0


def test_the_scenario_state_trains_on_the_memory_state_trajectories(trained) -> None:  # type: ignore[no-untyped-def]
    """router_learned_scenario's planner reads the same rows (each state vector is computed from the
    step's recorded memory and the task facts): its own checkpoint, no new trajectory."""
    scenario = replace(CONTEXT, chainrec_planner_state="scenario")
    config = trajectory_config(scenario, {"candidates": 6, "seed": 0}, "classic")
    train = replace(TINY, state="scenario")
    other = ensure_router_checkpoint(scenario, config, train, root=trained.folder.parent)
    assert other.folder != trained.folder and not other.reused
    assert other.trajectories.path == trained.trajectories.path and other.trajectories.new == 0
    saved = json.loads((other.folder / "config.json").read_text(encoding="utf-8"))
    assert saved["state"] == "scenario" and saved["trajectory_file"] == str(trained.trajectories.path)


def test_rows_are_rescored_for_a_cost_weight_by_hand() -> None:
    row = {
        "tools": ["A", "B"],
        "tool_tokens": {"A": 100, "B": 0},
        "rankings": {"0": {"avg_hr": 0.5}, "0.1": {"avg_hr": 1.0}},
        "chains": [["0", "0", 0.49], ["0.1", "0.1", 0.98]],
    }
    [scored] = with_cost([row], 0.01, 0.001)
    # R = AvgHR - 0.01 * tools - 0.001 * tokens
    assert scored["chains"] == [["0", "0", 0.39], ["0.1", "0.1", 0.88]]
    assert scored["cost_lam"] == 0.001 and row["chains"][0][2] == 0.49  # the input is left as it was
    assert with_cost([row], 0.01, 0.0) == [row]


def test_candidate_rank_ranks_with_the_fusion_weights_the_checkpoint_learned(trained, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A checkpoint whose learned weights are all 0 leaves nothing to fuse, so CandidateRank keeps the
    candidates' input order; the same planner with the context's weights ranks by the evidence."""
    import shutil

    from agents.chainrec.online.planners import ranking_context

    request = {"user_id": "7", "candidates": ["50", "181", "1", "2", "3", "100"], "scenario": "classic"}
    zero = tmp_path / "zero"
    shutil.copytree(trained.folder, zero)
    config = json.loads((zero / "config.json").read_text(encoding="utf-8"))
    tools = [spec.name for spec in ROUTER_TOOLS[:-1]]
    config["fusion"] = {"mode": "learned", "used": "learned", "weights": dict.fromkeys(tools, 0.0)}
    (zero / "config.json").write_text(json.dumps(config), encoding="utf-8")
    learned = replace(CONTEXT, chainrec_checkpoint=str(zero))
    assert ranking_context(learned, ROUTER_TOOLS, "classic").chainrec_weight_collaborative == 0.0
    assert ranking_context(replace(learned, chainrec_planner="rule"), ROUTER_TOOLS, "classic") == replace(
        learned, chainrec_planner="rule"
    )
    out = get_graph("router_learned").invoke(request, context=learned)
    assert out["ranking"] == request["candidates"]
    named = tmp_path / "named"
    shutil.copytree(zero, named)
    kept = dict(config, fusion={"mode": "context", "used": "context"})
    (named / "config.json").write_text(json.dumps(kept), encoding="utf-8")
    named_context = replace(learned, chainrec_checkpoint=str(named))
    out = get_graph("router_learned").invoke(request, context=named_context)
    assert out["ranking"] != request["candidates"]
