"""The learned planner's state is S_t = (u, I_cand, M_t) (Eq. 2 and 7): the vector it scores reads
what the episode's tools wrote and the candidates, never the scenario tag or a fact of the
environment no tool gathered; the scenario-aware state is an ablation with its own checkpoints."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.chainrec.offline.pipeline import checkpoint_folder
from agents.chainrec.offline.policy_train import TrainConfig
from agents.chainrec.offline.training_tasks import TrajectoryConfig
from agents.chainrec.online import learned_planner
from agents.chainrec.online.catalog import CANDIDATE_RANK, EVIDENCE_TOOLS
from agents.chainrec.online.features import MEMORY_STATS, feature_dim, feature_names
from agents.chainrec.online.learned_planner import LearnedPlanner, MissingCheckpoint
from agents.chainrec.online.mask import feasibility
from agents.chainrec.online.planning import PlanView
from agents.chainrec.online.policy import FORMAT_VERSION, PolicyWeights, find_checkpoint, mark_latest
from state.chainrec.context import ChainRecContext
from world.embeddings import EMBEDDING_DIM

ACTIONS = (*EVIDENCE_TOOLS, CANDIDATE_RANK)


def write_checkpoint(folder: Path, state: str) -> Path:
    """A checkpoint of random weights over ChainRec's catalog, trained (nominally) on `state`."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(0)
    width = feature_dim(EVIDENCE_TOOLS, state)
    PolicyWeights(
        rng.normal(size=(width, 4)),
        rng.normal(size=4),
        rng.normal(size=(4, len(ACTIONS))),
        np.zeros(len(ACTIONS)),
    ).save(folder / "sft.npz")
    config = {"format_version": FORMAT_VERSION, "state": state, "actions": list(ACTIONS), "training": {}}
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def entry(tool: str, stats: dict[str, float]) -> dict[str, Any]:
    """A memory entry of `tool` that reported `stats`."""
    return {
        "step": 1, "tool": tool, "facets": [], "confidence": 0.5, "summary": f"{tool} ran",
        "items": [], "source": "heuristic", "stats": stats, "evidence": [],
    }  # fmt: skip


def view(scenario: str, domain: dict[str, bool], memory: tuple[dict[str, Any], ...]) -> PlanView:
    """A decision on three candidates after `memory`."""
    mask, notes = feasibility([e["tool"] for e in memory], 6, domain)
    return PlanView("u1", ("a", "b", "c"), scenario, memory, mask, notes, 6, domain)  # type: ignore[arg-type]


def vectors_seen(monkeypatch: pytest.MonkeyPatch) -> list[np.ndarray]:
    """The state vectors the policy is asked to score, as they happen."""
    seen: list[np.ndarray] = []
    original = PolicyWeights.logits

    def spy(self: PolicyWeights, x: np.ndarray) -> np.ndarray:
        seen.append(np.array(x))
        return original(self, x)

    monkeypatch.setattr(PolicyWeights, "logits", spy)
    return seen


def test_the_memory_state_names_no_scenario_tag_and_no_environment_fact() -> None:
    names = feature_names(EVIDENCE_TOOLS, "memory")
    assert not [n for n in names if n.startswith(("scenario:", "domain:", "candidates_", "log_history"))]
    assert not [n for n in names if n in ("log_days_since_last", "no_timestamps")]
    assert {f"stat:{s}" for s in MEMORY_STATS} <= set(names)
    ablation = feature_names(EVIDENCE_TOOLS, "scenario")
    assert "scenario:cold_user" in ablation and "domain:authors" in ablation


def test_the_vector_reads_the_memory_not_the_scenario_or_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two decisions that differ in the scenario tag and in what the dataset carries but share their
    memory are one state; no environment fact is computed for it (reading one fails the test); a
    count a tool wrote into the memory moves it."""
    folder = write_checkpoint(tmp_path / "memory", "memory")
    monkeypatch.setattr(
        learned_planner, "episode_facts", lambda *a: pytest.fail("the memory state read an environment fact")
    )
    monkeypatch.setattr(
        learned_planner, "memory_embedding", lambda memory: np.zeros(EMBEDDING_DIM, np.float32)
    )
    seen = vectors_seen(monkeypatch)
    planner = LearnedPlanner(ChainRecContext(chainrec_planner="learned", chainrec_checkpoint=str(folder)))
    memory = (entry("LongTermPreference", {"history_items": 3.0}),)
    plain = {"ratings": True, "categories": True}
    books = {**plain, "authors": True, "timestamps": True, "reviews": True}
    planner.decide(view("classic", plain, memory))
    planner.decide(view("cold_user", books, memory))
    assert len(seen) == 2 and len(seen[0]) == feature_dim(EVIDENCE_TOOLS, "memory")
    np.testing.assert_array_equal(seen[0], seen[1])
    names = feature_names(EVIDENCE_TOOLS, "memory")
    assert seen[0][names.index("used:LongTermPreference")] == 1.0
    assert seen[0][names.index("stat:history_items")] == pytest.approx(np.log1p(3.0) / np.log(1000.0))
    assert seen[0][names.index("unreported:cold_candidates")] == 1.0
    planner.decide(view("classic", plain, (entry("LongTermPreference", {"history_items": 400.0}),)))
    assert not np.array_equal(seen[2], seen[0])


def test_a_checkpoint_of_the_other_state_is_never_reused(tmp_path: Path) -> None:
    folder = write_checkpoint(tmp_path / "scenario", "scenario")
    ctx = ChainRecContext(chainrec_planner="learned", chainrec_checkpoint=str(folder))
    with pytest.raises(MissingCheckpoint, match="trained on the scenario state, the run asks for the memory"):
        LearnedPlanner(ctx).checkpoint("classic")
    config = TrajectoryConfig(dataset="ml-100k", scenario="classic")
    keys = {
        checkpoint_folder(tmp_path, config, TrainConfig(state=s), False).name for s in ("memory", "scenario")
    }
    assert len(keys) == 2


def test_the_latest_checkpoint_is_found_per_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """latest.json keeps one entry per (scenario, state): a memory-state run never finds the
    ablation's checkpoint, and the other way round."""
    from agents.chainrec.online import policy

    monkeypatch.setattr(policy, "checkpoint_root", lambda dataset: tmp_path)
    ablation = write_checkpoint(tmp_path / "classic-ablation", "scenario")
    mark_latest(tmp_path, "classic", ablation, "scenario")
    assert find_checkpoint("toy-state", "classic", state="memory") is None
    assert find_checkpoint("toy-state", "classic", state="scenario") == ablation
    own = write_checkpoint(tmp_path / "classic-own", "memory")
    mark_latest(tmp_path, "classic", own, "memory")
    assert find_checkpoint("toy-state", "classic", state="memory") == own
    assert find_checkpoint("toy-state", "classic", state="scenario") == ablation
