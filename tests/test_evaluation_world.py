"""Evaluation worlds (world/evaluation_world.py): cold_user's world drops only the evaluated users'
hidden history, the other scenarios keep the dataset, and cold_start evaluates users with 2-3
interactions."""

from __future__ import annotations

from pathlib import Path

import pytest

import world.evaluation_world as evaluation_world_module
from bench.protocol.plan import evaluation_context, plan_cases
from bench.protocol.spec import Protocol
from state.context import Context
from tests.test_cold_user_leak import TITLES, write_planted
from world.environment import evaluation_world, get_environment
from world.errors import ProtocolError
from world.evaluation_world import hidden_interactions, load_world, world_spec


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


def test_classic_and_cold_item_keep_the_dataset() -> None:
    context = Context(dataset="ml-100k")
    for scenario in ("classic", "cold_item"):
        protocol = Protocol(dataset="ml-100k", scenario=scenario, users=3)
        assert evaluation_context(context, protocol, []) is context


def write_dated(folder: Path) -> str:
    """Two users whose interactions are 1, 2, ... days apart at first and 1 hour apart at the end."""
    folder.mkdir(parents=True)
    items = ["item_id:token\tmovie_title:token_seq"] + [f"{n}\t{t}" for n, t in enumerate(TITLES, 1)]
    (folder / "dated.item").write_text("\n".join(items) + "\n")
    day, hour = 86_400, 3_600
    # "e": six items 25 days apart, then its validation item and target an hour apart: under
    # evolving_short (7 days) it sees only its validation item. "o" keeps everything.
    stamps = {"e": [25 * day * k for k in range(6)] + [150 * day + hour, 150 * day + 2 * hour],
              "o": [day * k for k in range(8)]}  # fmt: skip
    rows = ["user_id:token\titem_id:token\ttimestamp:float"]
    for u, (user, times) in enumerate(stamps.items()):
        rows += [f"{user}\t{u * 8 + k + 1}\t{t}" for k, t in enumerate(times)]
    (folder / "dated.inter").write_text("\n".join(rows) + "\n")
    return str(folder)


@pytest.mark.parametrize("scenario", ["evolving_short", "evolving_long"])
def test_the_evolving_worlds_drop_the_history_outside_the_window(tmp_path: Path, scenario: str) -> None:
    """An evolving scenario hides the history older than its window: its world drops it for the
    evaluated user, who keeps its validation item and target even when that is all it has left."""
    data = write_dated(tmp_path / "dated")
    env = get_environment(data)
    hidden = [e.item_id for e in hidden_interactions(env.cases["e"], scenario)]
    shown = {"evolving_short": ["7"], "evolving_long": ["4", "5", "6", "7"]}[scenario]
    assert env.history("e", scenario) == shown and hidden == [str(n) for n in range(1, 8 - len(shown))]
    world = evaluation_world(data, scenario, ["e"])
    assert world.cases["e"].target == env.cases["e"].target and world.history("e", scenario) == shown
    assert world.train_matrix.nnz == env.train_matrix.nnz - len(hidden)
    assert world.cases["o"] == env.cases["o"]  # not evaluated: nothing dropped


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
    rebuilt = load_world(spec, get_environment)
    assert rebuilt.cases["a"].history == get_environment(spec).cases["a"].history
    assert [e.item_id for e in rebuilt.cases["b"].before_target()] == ["9", "10", "11"]
    with pytest.raises(ProtocolError, match="is not recorded"):
        load_world(spec[:-12] + "0" * 12, get_environment)
