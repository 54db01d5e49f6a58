"""The learned planners' two states (memory, scenario) train on one trajectory file: a row records each
step's memory entries and the task facts, and either state vector is computed from them, so the
trajectory key never holds the state; the checkpoints stay apart."""

from __future__ import annotations

from pathlib import Path

from agents.chainrec.offline.pipeline import checkpoint_folder, trajectory_folder
from graphs.chainrec.learned import train_config, trajectory_config
from graphs.registry import method_context
from state.context import Context

PROTOCOL = {"candidates": 10, "seed": 0}


def test_chainrec_learned_scenario_shares_chainrec_learned_trajectories(tmp_path: Path) -> None:
    memory = method_context("chainrec_learned", Context(dataset="ml-100k"))
    scenario = method_context("chainrec_learned_scenario", Context(dataset="ml-100k"))
    assert (memory.chainrec_planner_state, scenario.chainrec_planner_state) == ("memory", "scenario")
    rows = [trajectory_config(ctx, PROTOCOL, "classic") for ctx in (memory, scenario)]
    assert rows[0] == rows[1]
    assert trajectory_folder(tmp_path, rows[0]) == trajectory_folder(tmp_path, rows[1])
    trains = [train_config(ctx, 0) for ctx in (memory, scenario)]
    assert checkpoint_folder(tmp_path, rows[0], trains[0], False) != checkpoint_folder(
        tmp_path, rows[1], trains[1], False
    )
