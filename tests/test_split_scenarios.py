"""Leave-one-out split and the five scenarios."""

from pathlib import Path

import pytest

from world.data import Interaction
from world.errors import ProtocolError
from world.loaders.recbole_atomic import load_recbole_atomic
from world.scenarios import (
    DAY,
    check_scenario,
    cold_start_cases,
    eligible_users,
    scenario_rule,
    visible_history,
)
from world.split import UserCase, leave_one_out


def test_leave_one_out_orders_by_time(tiny_dataset_dir: Path) -> None:
    cases = leave_one_out(load_recbole_atomic(tiny_dataset_dir))
    u1 = cases["u1"]
    # u1's file order is 3,1,6,4 but time order is 1(100),6(200),3(300),4(400).
    assert [e.item_id for e in u1.history] == ["1", "6"]
    assert u1.valid is not None and u1.valid.item_id == "3"
    assert u1.target.item_id == "4"
    assert [e.item_id for e in u1.before_target()] == ["1", "6", "3"]


def test_users_below_minimum_are_skipped(tiny_dataset_dir: Path) -> None:
    dataset = load_recbole_atomic(tiny_dataset_dir)
    assert set(leave_one_out(dataset)) == {"u1", "u2", "u3"}  # u4 has 2 interactions
    assert set(leave_one_out(dataset, min_interactions=4)) == {"u1", "u3"}


def make_case(days_before_target: list[float]) -> UserCase:
    target_time = 1000 * DAY
    events = [Interaction("u", f"i{n}", target_time - d * DAY) for n, d in enumerate(days_before_target)]
    return UserCase("u", tuple(events[:-1]), events[-1], Interaction("u", "t", target_time))


def test_cold_user_sees_last_three() -> None:
    case = make_case([400, 300, 200, 100, 50, 1])
    assert visible_history(case, "classic") == ["i0", "i1", "i2", "i3", "i4", "i5"]
    assert visible_history(case, "cold_user") == ["i3", "i4", "i5"]


def test_evolving_windows() -> None:
    case = make_case([400, 100, 89, 30, 6.5, 1])
    assert visible_history(case, "evolving_long") == ["i2", "i3", "i4", "i5"]
    assert visible_history(case, "evolving_short") == ["i4", "i5"]


def test_evolving_users_with_empty_window_are_not_eligible() -> None:
    cases = {"old": make_case([400, 300, 200]), "fresh": make_case([400, 3, 2])}
    assert eligible_users(cases, "evolving_short", {}, 10) == ["fresh"]
    assert sorted(eligible_users(cases, "classic", {}, 10)) == ["fresh", "old"]


def test_cold_item_keeps_users_with_unpopular_targets() -> None:
    cases = {"a": make_case([3, 2, 1]), "b": make_case([3, 2, 1])}
    cases["b"] = UserCase("b", cases["b"].history, cases["b"].valid, Interaction("b", "hit", 0))
    popularity = {"t": 0, "hit": 50, "x": 10, "y": 20, "z": 30}
    # Ten items, five with counts, five with zero: the 20% quantile is 0.
    assert eligible_users(cases, "cold_item", popularity, 10) == ["a"]


def test_scenarios_are_checked() -> None:
    with pytest.raises(ProtocolError, match="unknown scenario 'warm'"):
        check_scenario("warm", True)
    with pytest.raises(ProtocolError, match="needs timestamps"):
        check_scenario("evolving_short", False)
    check_scenario("cold_user", False)


def test_cold_start_takes_users_with_two_or_three_interactions(tiny_dataset_dir: Path) -> None:
    dataset = load_recbole_atomic(tiny_dataset_dir)
    # u4 has 2 interactions (the default split skips it), u2 has 3; u1 and u3 have 4.
    cases = cold_start_cases(dataset)
    assert sorted(cases) == ["u2", "u4"]
    assert cases["u4"].history == () and cases["u4"].valid is not None and cases["u4"].valid.item_id == "5"
    assert cases["u4"].target.item_id == "2"
    assert visible_history(cases["u4"], "cold_start") == ["5"]
    assert sorted(eligible_users(cases, "cold_start", {}, 6)) == ["u2", "u4"]
    # Given the default split, cold_start keeps only its 3-interaction users.
    assert eligible_users(leave_one_out(dataset), "cold_start", {}, 6) == ["u2"]
    assert "2 or 3 interactions" in scenario_rule("cold_start", {}, 6)
    check_scenario("cold_start", has_time=False)  # order-only data is fine
