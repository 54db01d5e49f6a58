"""The held-out table's chains per scenario: each planner's most chosen tool sets on each scenario's
tasks, with their share and mean AvgHR (hand-made rows, values by hand)."""

from __future__ import annotations

from agents.chainrec.offline.chain_wins import chains_by_scenario
from agents.chainrec.offline.chains import chain_code


def row(scenario: str, hr: dict[str, float]) -> dict:
    """A row over tools A, B, C whose tool sets (given as "A>B") reached the AvgHR `hr`."""
    tools = ["A", "B", "C"]
    return {
        "task": {"scenario": scenario},
        "tools": tools,
        "chains": [],
        "rankings": {chain_code(tools, key.split(">")): {"avg_hr": value} for key, value in hr.items()},
    }


def test_each_scenario_lists_the_planner_s_most_chosen_sets_with_share_and_avg_hr() -> None:
    held = [
        row("classic", {"A": 1.0, "A>B": 0.5}),
        row("classic", {"A": 0.0, "A>B": 1.0}),
        row("classic", {"A": 0.5, "C": 0.0}),
        row("cold_user", {"C": 1 / 3, "B>C": 2 / 3}),
    ]
    chains = {
        "learned": [["A"], ["B", "A"], ["A"], ["C", "B"]],
        "oracle": [["A"], ["A", "B"], ["A"], ["B", "C"]],
    }
    found = chains_by_scenario(held, chains)
    assert list(found) == ["classic", "cold_user"]
    # learned on classic: {A} on rows 0 and 2 (AvgHR 1.0, 0.5), {A,B} on row 1 (1.0)
    assert found["classic"]["learned"] == [
        {"tools": "A", "share": round(2 / 3, 4), "avg_hr": 0.75},
        {"tools": "A+B", "share": round(1 / 3, 4), "avg_hr": 1.0},
    ]
    assert found["cold_user"]["oracle"] == [{"tools": "B+C", "share": 1.0, "avg_hr": round(2 / 3, 4)}]


def test_a_set_no_row_recorded_has_no_avg_hr_and_only_the_top_sets_are_kept() -> None:
    held = [row("classic", {"A": 1.0}) for _ in range(4)]
    chains = {"learned": [["A"], ["B"], ["C"], ["B"]]}
    found = chains_by_scenario(held, chains, top=2)["classic"]["learned"]
    assert found == [
        {"tools": "B", "share": 0.5, "avg_hr": None},
        {"tools": "A", "share": 0.25, "avg_hr": 1.0},
    ]
