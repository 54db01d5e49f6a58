"""AgentRecBench's release layout (world/loaders/agentrecbench.py): each scenario's cases come from its
own task folder, against its own environment data, with nothing hidden on top; bad layouts are one
line (tests/fixtures/agentrecbench_layout.py writes the folder)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.protocol.eligibility import candidates_block, describe_candidates, describe_cases, eligibility
from bench.protocol.plan import evaluation_context, plan_cases
from bench.protocol.spec import Protocol
from recgraph.cli import main
from state.context import Context
from tests.fixtures.agentrecbench_layout import DAY_MS, agentrecbench_layout
from world.datasets import load_dataset
from world.environment import get_environment
from world.errors import DatasetNotFoundError, ProtocolError
from world.loaders.agentrecbench import SCENARIO_FOLDERS, corpus_spec, scenario_spec, task_users
from world.loaders.agentsociety_json import read_object
from world.scenarios import SCENARIOS


@pytest.fixture
def release(tmp_path: Path) -> Path:
    """An Amazon-shaped release: 6 tasks per scenario."""
    return agentrecbench_layout(tmp_path / "release")


def folder_tasks(release: Path, scenario: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """user -> (ground truth, candidates) as the scenario's task files hold them."""
    folder = release / "task" / SCENARIO_FOLDERS[scenario] / "amazon"
    tasks = {}
    for path in sorted((folder / "tasks").glob("task_*.json")):
        task = read_object(path)[0]
        truth = read_object(folder / "groundtruth" / path.name.replace("task_", "groundtruth_"))[0]
        tasks[task["user_id"]] = (truth["ground truth"], tuple(task["candidate_list"]))
    return tasks


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_scenario_s_cases_are_its_task_files(release: Path, scenario: str) -> None:
    spec = scenario_spec(str(release), scenario)
    env = get_environment(spec)
    expected = folder_tasks(release, scenario)
    assert env.dataset.cases_from == f"AgentRecBench task/{SCENARIO_FOLDERS[scenario]}/amazon (6 tasks)"
    cases = plan_cases(env, Protocol(dataset=spec, scenario=scenario, candidates=20, users=50))
    assert {c.user_id: (c.target, tuple(sorted(c.candidates))) for c in cases} == {
        user: (target, tuple(sorted(pool))) for user, (target, pool) in expected.items()
    }
    # the run's world is the view itself: nothing of the benchmark's data is hidden a second time
    context = Context(dataset=spec)
    assert evaluation_context(context, Protocol(dataset=spec, scenario=scenario), cases) is context


def test_evolving_scenarios_read_their_own_environment_data(release: Path) -> None:
    every = load_dataset(scenario_spec(str(release), "classic"))
    short = load_dataset(scenario_spec(str(release), "evolving_short"))
    long = load_dataset(scenario_spec(str(release), "evolving_long"))
    assert len(short.interactions) < len(long.interactions) < len(every.interactions)
    env = get_environment(scenario_spec(str(release), "evolving_short"))
    for user in env.dataset.presplit or {}:
        times = [e.timestamp for e in short.interactions if e.user_id == user]
        assert max(times) - min(times) <= 7 * DAY_MS / 1000  # the release cut the window
        # the whole history the view holds is shown: the scenario is in the data, not in a rule
        assert env.history(user, "evolving_short") == env.history(user, "classic")


def test_the_run_says_where_its_cases_come_from(release: Path) -> None:
    spec = scenario_spec(str(release), "cold_item")
    env = get_environment(spec)
    protocol = Protocol(dataset=spec, scenario="cold_item", candidates=20, users=50)
    cases = plan_cases(env, protocol)
    block = candidates_block(env, protocol, cases)
    assert block["cases"] == "AgentRecBench task/item_cold_start/amazon (6 tasks)"
    assert block["eligible_by_scenario"] == {"cold_item": 6}
    assert describe_cases(block) == "cases: AgentRecBench task/item_cold_start/amazon (6 tasks)"
    assert describe_candidates(block).startswith("candidates: the target + 19 negatives drawn from")
    assert eligibility(env, "cold_item", 20).steps[1].rule == f"cases: {block['cases']}"


def test_data_without_the_layout_says_its_cases_follow_recgraph_s_rules(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert main(["bench", "--methods", "random", "--users", "5", "--out", str(out)]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["candidates"]["cases"] == "recgraph's scenario rules (world/scenarios.py)"


def test_a_release_named_without_a_scenario_loads_the_classic_view(release: Path) -> None:
    assert load_dataset(str(release)).cases_from.startswith("AgentRecBench task/classic/amazon")


def test_a_scenario_the_release_has_no_folder_for_is_refused(release: Path) -> None:
    with pytest.raises(ProtocolError, match="has no task folder for 'cold_start'"):
        scenario_spec(str(release), "cold_start")


def test_missing_evolving_environment_data_is_named(release: Path) -> None:
    (release / "output_data_short" / "review.json").unlink()
    with pytest.raises(DatasetNotFoundError) as refused:
        load_dataset(scenario_spec(str(release), "evolving_short"))
    assert "without output_data_short/item.json and review.json" in str(refused.value)


def test_several_domains_need_a_choice_and_a_domain_mark_picks_one(release: Path) -> None:
    classic = release / "task" / "classic"
    (classic / "amazon").rename(classic / "yelp")
    for scenario in SCENARIO_FOLDERS.values():  # a second domain beside amazon everywhere
        source = release / "task" / scenario / ("yelp" if scenario == "classic" else "amazon")
        target = release / "task" / scenario / ("amazon" if scenario == "classic" else "yelp")
        target.mkdir()
        for part in ("tasks", "groundtruth"):
            (target / part).mkdir()
            first = sorted((source / part).iterdir())[0]
            (target / part / first.name).write_text(first.read_text())
    with pytest.raises(DatasetNotFoundError) as refused:
        load_dataset(scenario_spec(str(release), "classic"))
    assert "holds several domains (amazon, yelp)" in str(refused.value)
    picked = load_dataset(scenario_spec(f"{release}#domain:amazon", "classic"))
    assert picked.cases_from == "AgentRecBench task/classic/amazon (1 tasks)"
    with pytest.raises(DatasetNotFoundError, match="no task files for domain 'goodreads'"):
        load_dataset(scenario_spec(f"{release}#domain:goodreads", "classic"))
    # one training corpus for the whole release: every domain's task users are left out of it
    views = [scenario_spec(f"{release}#domain:{d}", s) for d in ("amazon", "yelp") for s in SCENARIOS]
    assert {corpus_spec(view) for view in views} == {corpus_spec(str(release))}
    yelp_users = {read_object(p)[0]["user_id"] for p in (classic / "yelp" / "tasks").iterdir()}
    assert yelp_users and yelp_users <= task_users(release)
