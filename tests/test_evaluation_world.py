"""Evaluation worlds (world/evaluation_world.py): cold_user's world drops only the evaluated users'
hidden history, the other scenarios keep the dataset, and cold_start evaluates users with 2-3
interactions."""

from __future__ import annotations

from pathlib import Path

import pytest

import world.evaluation_world as evaluation_world_module
from bench.protocol import Protocol, evaluation_context, plan_cases
from state.context import Context
from tests.test_cold_user_leak import TITLES, write_planted
from world.environment import get_environment
from world.errors import ProtocolError
from world.evaluation_world import evaluation_world, hidden_interactions, load_world, world_spec


def test_the_cold_user_world_drops_only_the_hidden_part(tmp_path: Path) -> None:
    data = write_planted(tmp_path / "planted")
    env = get_environment(data)
    hidden = [e.item_id for e in hidden_interactions(env.cases["a"], "cold_user")]
    assert (
        hidden == ["1", "p1", "2", "p2", "3", "p3"] and hidden_interactions(env.cases["a"], "classic") == ()
    )
    world = evaluation_world(data, "cold_user", ["a"])
    assert world is evaluation_world(data, "cold_user", ["a"])  # one world per (dataset, users)
    assert [e.item_id for e in world.cases["a"].before_target()] == ["4", "5", "6"]
    assert world.cases["a"].target == env.cases["a"].target
    assert world.history("a", "cold_user") == env.history("a", "cold_user") == ["4", "5", "6"]
    # b is not evaluated here: it keeps its whole history, so p1..p3 stay in this world's matrix.
    assert world.cases["b"] == env.cases["b"]
    assert world.train_matrix.nnz == env.train_matrix.nnz - 6  # a's hidden 1, p1, 2, p2, 3, p3
    assert world.dataset.source != env.dataset.source  # caches of its own
    assert world.item_vectors() is env.item_vectors()  # the catalog's vectors, shared


def test_classic_and_the_other_scenarios_keep_the_dataset() -> None:
    context = Context(dataset="ml-100k")
    for scenario in ("classic", "cold_item", "evolving_long", "evolving_short"):
        protocol = Protocol(dataset="ml-100k", scenario=scenario, users=3)
        assert evaluation_context(context, protocol, []) is context


def write_light_users(folder: Path) -> str:
    """A catalog with users of 2, 3, 4 and 6 interactions (order only)."""
    folder.mkdir(parents=True)
    items = ["item_id:token\tmovie_title:token_seq"] + [f"{n}\t{t}" for n, t in enumerate(TITLES, 1)]
    (folder / "light.item").write_text("\n".join(items) + "\n")
    users = {"two": 2, "three": 3, "four": 4, "six": 6, "six2": 6}
    rows = ["user_id:token\titem_id:token\ttimestamp:float"]
    for u, (user, count) in enumerate(users.items()):
        rows += [f"{user}\t{(u * 3 + k) % 18 + 1}\t{k + 1}" for k in range(count)]
    (folder / "light.inter").write_text("\n".join(rows) + "\n")
    return str(folder)


def test_cold_start_evaluates_users_with_two_or_three_interactions(tmp_path: Path) -> None:
    data = write_light_users(tmp_path / "light")
    env = get_environment(data)
    assert "two" not in env.cases  # the default split still skips it: other scenarios keep their users
    classic = plan_cases(env, Protocol(dataset=data, candidates=3, users=10))
    assert sorted(c.user_id for c in classic) == ["four", "six", "six2", "three"]
    cold = plan_cases(env, Protocol(dataset=data, candidates=3, users=10, scenario="cold_start"))
    assert sorted(c.user_id for c in cold) == ["three", "two"]
    two = next(c for c in cold if c.user_id == "two")
    assert two.target == "2"  # its second and last interaction
    world = evaluation_world(data, "cold_start", ["two", "three"])
    assert world.history("two", "cold_start") == ["1"] and world.cases["two"].history == ()
    assert world.train_matrix.nnz == env.train_matrix.nnz  # a light user adds no hidden training data
    assert env.history("two", "cold_start") == ["1"]  # the dataset's own view agrees


def test_cold_start_is_refused_on_a_dataset_without_light_users() -> None:
    with pytest.raises(ProtocolError, match="no user of 'ml-100k' qualifies for 'cold_start'"):
        plan_cases(get_environment("ml-100k"), Protocol(dataset="ml-100k", scenario="cold_start"))


def test_another_process_rebuilds_a_cold_user_world_from_its_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_planted(tmp_path / "planted")
    spec = world_spec(data, "cold_user", ["b", "a"])
    assert spec == world_spec(data, "cold_user", ["a", "b"])  # the users' order does not matter
    monkeypatch.setattr(evaluation_world_module, "_users_of", {})  # as a fresh worker process
    rebuilt = load_world(spec)
    assert rebuilt.cases["a"].history == get_environment(spec).cases["a"].history
    assert [e.item_id for e in rebuilt.cases["b"].before_target()] == ["9", "10", "11"]
    with pytest.raises(ProtocolError, match="is not recorded"):
        load_world(spec[:-12] + "0" * 12)
