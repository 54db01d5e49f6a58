"""ChainRec as the paper trains and evaluates it: one planner over every scenario of a run, trained on
tasks outside the evaluated ones with benchmark-like candidates, whose state and TRL exports carry no
scenario tag (the AgentRecBench release layout: tests/fixtures/agentrecbench_layout.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agents.chainrec.offline.export import dpo_rows, sft_rows
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import TrajectoryConfig, training_tasks
from agents.chainrec.online.policy import RUN_SCOPE, planner_dataset, planner_key
from recgraph.cli import main
from tests.fixtures.agentrecbench_layout import agentrecbench_layout
from world.environment import get_environment
from world.loaders.agentrecbench import corpus_spec, scenario_spec, task_targets, task_users
from world.scenarios import SCENARIOS


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """An Amazon-shaped AgentRecBench release: 6 tasks per scenario, 60 other users."""
    return agentrecbench_layout(tmp_path / "Amazon", users=90)


def test_one_planner_serves_every_scenario_and_the_ablation_keeps_one_each() -> None:
    assert {planner_key(s, "run") for s in SCENARIOS} == {RUN_SCOPE}
    assert [planner_key(s, "scenario") for s in SCENARIOS] == list(SCENARIOS)


def test_every_scenario_view_of_a_release_trains_on_the_same_corpus(release: Path) -> None:
    views = {scenario_spec(str(release), s) for s in SCENARIOS}
    assert len(views) == 5  # each scenario runs on its own view
    corpus = {planner_dataset(view, "run") for view in views}
    assert corpus == {corpus_spec(str(release))} and corpus != views
    assert {planner_dataset(view, "scenario") for view in views} == views  # the ablation: its own


def test_training_tasks_leave_every_task_user_out_and_look_like_the_benchmark_s(release: Path) -> None:
    spec = corpus_spec(str(release))
    assert spec is not None
    full = get_environment(spec)
    evaluated = task_users(release)
    assert len(evaluated) == 30
    # the corpus holds nothing of a task user: no ground truth, no history a scenario hides
    assert task_targets(release) and not any(e.user_id in evaluated for e in full.dataset.interactions)
    config = TrajectoryConfig(dataset=spec, scenario=RUN_SCOPE, tasks=15, candidates=20)
    tasks = training_tasks(training_environment(full), full, config)
    assert len(tasks) == 15 and not {t.user_id for t in tasks} & evaluated
    assert len({t.user_id for t in tasks}) == len(tasks)  # one task per user
    assert sorted(t.scenario for t in tasks) == sorted(SCENARIOS * 3)  # every cell, 3 tasks each
    for task in tasks:
        touched = full.interacted(task.user_id)
        negatives = [c for c in task.candidates if c != task.target]
        assert len(task.candidates) == 20 and task.target in task.candidates and len(negatives) == 19
        assert not set(negatives) & touched


def test_a_release_run_takes_its_cases_from_each_scenario_s_task_folder_with_one_planner(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    checkpoints = set()
    for scenario, folder in (("cold_user", "user_cold_start"), ("evolving_short", "short_term")):
        out = tmp_path / scenario
        args = ["bench", "--dataset", str(release), "--scenario", scenario, "--methods", "chainrec_learned"]
        knobs = ["--set", "chainrec_train_tasks=10", "--set", "chainrec_chain_cap=12"]
        assert main([*args, *knobs, "--candidates", "20", "--users", "6", "--out", str(out)]) == 0
        metrics = json.loads((out / "metrics.json").read_text())
        assert metrics["candidates"]["cases"] == f"AgentRecBench task/{folder}/amazon (6 tasks)"
        assert metrics["candidates"]["evaluated"] == 6
        assert f"cases: AgentRecBench task/{folder}/amazon (6 tasks)" in capsys.readouterr().out
        checkpoints.add(metrics["methods"]["chainrec_learned"]["planner_training"]["checkpoint"])
    assert len(checkpoints) == 1  # one planner for the run, trained once, then reused
    assert Path(checkpoints.pop()).name.startswith(f"{RUN_SCOPE}-")


def test_a_scenario_without_a_task_folder_or_a_domain_choice_is_refused_in_one_line(
    release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "--dataset", str(release), "--scenario", "cold_start", "--methods", "random"]) == 2
    assert "has no task folder for 'cold_start'" in capsys.readouterr().err
    (release / "task" / "classic" / "yelp" / "tasks").mkdir(parents=True)
    (release / "task" / "classic" / "amazon").rename(release / "task" / "classic" / "goodreads")
    (release / "task" / "classic" / "goodreads").rename(release / "task" / "classic" / "yelp2")
    source = release / "task" / "classic" / "yelp2" / "tasks"
    (release / "task" / "classic" / "yelp" / "tasks" / "task_0.json").write_text(
        (source / "task_0.json").read_text()
    )
    assert main(["bench", "--dataset", str(release), "--methods", "random"]) == 2
    err = capsys.readouterr().err.strip()
    assert "holds several domains (yelp, yelp2)" in err and "#domain:" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_trl_exports_never_name_the_scenario(
    toy_trajectory_rows: Callable[..., list[dict[str, Any]]], scenario: str
) -> None:
    rows = [
        {
            **row,
            "task": {**row["task"], "scenario": scenario},
            "facts": {**row["facts"], "scenario": scenario},
        }
        for row in toy_trajectory_rows(4)
    ]
    exported = json.dumps([*sft_rows(rows, 3), *dpo_rows(rows, 3, 2, 0)])
    assert scenario not in exported and "scenario" not in exported
    same = [replace_scenario(row, "classic") for row in rows]
    assert json.dumps([*sft_rows(same, 3)]) == json.dumps([*sft_rows(rows, 3)])


def replace_scenario(row: dict[str, Any], scenario: str) -> dict[str, Any]:
    """`row` posed under another scenario."""
    return {
        **row,
        "task": {**row["task"], "scenario": scenario},
        "facts": {**row["facts"], "scenario": scenario},
    }


def test_the_trajectory_config_of_a_run_names_no_scenario(release: Path) -> None:
    from graphs.chainrec.learned import trajectory_config
    from state.chainrec.context import ChainRecContext

    view = scenario_spec(str(release), "cold_item")
    context = ChainRecContext(dataset=view, chainrec_planner="learned")
    config = trajectory_config(context, {"candidates": 20, "seed": 0}, "cold_item")
    assert (config.scenario, config.dataset) == (RUN_SCOPE, corpus_spec(str(release)))
    ablation = trajectory_config(replace(context, chainrec_planner_scope="scenario"), {}, "cold_item")
    assert (ablation.scenario, ablation.dataset) == ("cold_item", view)
