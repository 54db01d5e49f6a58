"""router_learned_scenario trains on router_learned's rows with the same fusion inputs (the planner
state is read by the planner's training only): the fusion fit is made once per process and shared,
and the checkpoint it gives is the one a fit of its own gives."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import agents.chainrec.offline.pipeline as pipeline
from agents.chainrec.offline.policy_train import TrainConfig
from agents.chainrec.online.policy import PolicyWeights
from graphs.router.learned import ensure_router_checkpoint, trajectory_config
from state.router.context import RouterContext
from tests.baselines.test_trained import SMALL

TINY = TrainConfig(hidden=8, sft_epochs=20, dpo_epochs=5, eval_every=10)
CONTEXT = RouterContext(
    dataset="ml-100k", chainrec_planner="learned", chainrec_train_tasks=3, chainrec_chain_cap=30, **SMALL
)
"""Three training tasks; the training world's SASRec, GRU4Rec and LightGCN small (seconds to train)."""
PROTOCOL = {"candidates": 6, "seed": 0}


def test_the_scenario_planner_reuses_the_memory_planners_fusion_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "FUSED", {}, raising=False)  # nothing from other tests
    fits: list[int] = []
    fit = pipeline.learn_fusion

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        fits.append(1)
        return fit(*args, **kwargs)

    monkeypatch.setattr(pipeline, "learn_fusion", counted)
    seen: list[tuple[str, int, int]] = []
    memory = ensure_router_checkpoint(
        CONTEXT,
        trajectory_config(CONTEXT, PROTOCOL, "classic"),
        TINY,
        lambda *row: seen.append(row),
        tmp_path,
    )
    phases = list(dict.fromkeys(label for label, _, _ in seen))
    assert phases == ["trajectories", "fusion fit", "sft", "dpo", "held-out planners"]  # named phases
    assert ("fusion fit", 1, 1) in seen and seen[-1] == ("held-out planners", 1, 1)
    scenario_context = replace(CONTEXT, chainrec_planner_state="scenario")
    config = trajectory_config(scenario_context, PROTOCOL, "classic")
    scenario = ensure_router_checkpoint(
        scenario_context, config, replace(TINY, state="scenario"), root=tmp_path
    )
    assert not memory.reused and not scenario.reused and scenario.folder != memory.folder
    assert len(fits) == 1  # the second planner did not fit the fusion again
    assert scenario.evaluation["fusion"] == memory.evaluation["fusion"]

    # the shared fit's checkpoint is the one the scenario planner makes with a fit of its own
    kept = tmp_path / "kept"
    shutil.copytree(scenario.folder, kept)
    shutil.rmtree(scenario.folder)
    pipeline.FUSED.clear()
    alone = ensure_router_checkpoint(scenario_context, config, replace(TINY, state="scenario"), root=tmp_path)
    assert len(fits) == 2 and alone.folder == scenario.folder
    for stage in ("sft", "dpo"):
        shared, own = (
            PolicyWeights.load(kept / f"{stage}.npz"),
            PolicyWeights.load(alone.folder / f"{stage}.npz"),
        )
        for a, b in zip(
            (shared.w1, shared.b1, shared.w2, shared.b2), (own.w1, own.b1, own.w2, own.b2), strict=True
        ):
            assert np.array_equal(a, b)
    for name in ("evaluation.json", "config.json"):
        assert json.loads((kept / name).read_text()) == json.loads((alone.folder / name).read_text())
