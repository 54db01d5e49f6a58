"""The AgentSociety / AgentRecBench loader on malformed input: each error names the file, the line
and the problem, and `recgraph bench` says it in one line with exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recgraph.cli import main
from tests.fixtures.agentsociety_shapes import write_lines, write_task, yelp_folder
from tests.fixtures.agentsociety_tasks import BARE_ITEM, add_task, expect_error, task_for

NO_TIME = "review has no time ('date', 'timestamp', 'date_added') while others have one"


@pytest.mark.parametrize(
    ("file", "bad_line", "line", "problem"),
    [
        ("item.json", "{not json", 2, "not valid JSON: "),
        ("item.json", '["a list"]', 2, "expected a JSON object, found list"),
        ("item.json", '{"title": "no id"}', 2, "missing field 'item_id'"),
        ("item.json", json.dumps(BARE_ITEM), 2, "duplicate item id 'x9'"),
        ("item.json", '{"item_id": ["x"]}', 2, "field 'item_id' must be a string or an integer"),
        ("review.json", '{"user_id":"u","item_id":"zz"}', 2, "review refers to unknown item 'zz'"),
        ("review.json", '{"item_id": "x9", "date": "2020-01-01"}', 2, "missing field 'user_id'"),
        ("review.json", '{"user_id":"u","item_id":"x9","date":"soon"}', 2, "'date' is not a date"),
        ("review.json", '{"user_id":"u","item_id":"x9","stars":"five","date":"2020-01-01"}', 2,
         "field 'stars' is not a number: 'five'"),
        ("review.json", '{"user_id": "u", "item_id": "x9"}', 2, NO_TIME),
        ("user.json", '{"name": "nobody"}', 1, "missing field 'user_id'"),
    ],
)  # fmt: skip
def test_malformed_lines_name_file_line_and_problem(
    tmp_path: Path, file: str, bad_line: str, line: int, problem: str
) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    write_lines(tmp_path / "review.json", [{"user_id": "u", "item_id": "x9", "date": "2020-01-01"}])
    path = tmp_path / file
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    path.write_text(before + bad_line + "\n", encoding="utf-8")
    expect_error(tmp_path, path, line, problem)


def test_error_inside_a_json_array_names_the_element_line(tmp_path: Path) -> None:
    text = '[\n  {"item_id": "a"},\n\n  {"title": "b"}\n]\n'
    (tmp_path / "item.json").write_text(text, encoding="utf-8")
    expect_error(tmp_path, tmp_path / "item.json", 4, "missing field 'item_id'")


def test_missing_review_file_is_named(tmp_path: Path) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    expect_error(tmp_path, tmp_path / "review.json", None, "file not found")


X9 = {"ground truth": "x9"}


@pytest.mark.parametrize(
    ("task", "truth", "bad", "line", "problem"),
    [
        (task_for("u1", ["x9", "nope"]), X9, "task", 5, "candidate 'nope' is not in item.json"),
        (task_for("u1", ["x9", "x9"]), X9, "task", 5, "field 'candidate_list' repeats an item"),
        ({"type": "recommendation", "user_id": "u1"}, X9, "task", 1,
         "missing field 'candidate_list'"),
        ({"type": "user_behavior_simulation", "user_id": "u1"}, X9, "task", 2,
         "not a recommendation task (type 'user_behavior_simulation')"),
        (task_for("u1", ["x9"]), {"ground truth": "zz"}, "truth", 1,
         "ground truth 'zz' is not in item.json"),
        (task_for("u1", ["x9"]), {"answer": "x9"}, "truth", 1, "missing field 'ground truth'"),
    ],
)  # fmt: skip
def test_malformed_tasks_name_file_line_and_problem(
    tmp_path: Path, task: dict, truth: dict, bad: str, line: int, problem: str
) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    write_lines(tmp_path / "review.json", [{"user_id": "u1", "item_id": "x9"}])
    add_task(tmp_path, 0, task, truth)
    path = tmp_path / ("tasks/task_0.json" if bad == "task" else "groundtruth/groundtruth_0.json")
    expect_error(tmp_path, path, line, problem)


def test_task_json_syntax_error_and_missing_ground_truth_are_named(tmp_path: Path) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    write_lines(tmp_path / "review.json", [{"user_id": "u1", "item_id": "x9"}])
    add_task(tmp_path, 0, task_for("u1", ["x9"]), X9)
    (tmp_path / "groundtruth" / "groundtruth_0.json").unlink()
    expect_error(tmp_path, tmp_path / "groundtruth" / "groundtruth_0.json", None, "file not found")
    (tmp_path / "tasks" / "task_0.json").write_text('{\n  "user_id": "u1",\n  oops\n}')
    expect_error(tmp_path, tmp_path / "tasks" / "task_0.json", 3, "not valid JSON: ")


def test_two_tasks_for_one_user_are_refused(tmp_path: Path) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    write_lines(tmp_path / "review.json", [{"user_id": "u1", "item_id": "x9"}])
    add_task(tmp_path, 0, task_for("u1", ["x9"]), X9)
    add_task(tmp_path, 1, task_for("u1", ["x9"]), X9)
    expect_error(tmp_path, tmp_path / "tasks" / "task_1.json", 3, "user 'u1' already has a task")


@pytest.mark.parametrize(
    ("hours", "problem"),
    [
        ('"9-5"', "field 'hours' must be an object of day -> \"H:M-H:M\", found str"),
        ('{"Funday": "9:0-17:0"}', "field 'hours' has an unknown day 'Funday'"),
        ('{"Monday": "nine to five"}', "field 'hours' has Monday 'nine to five', not \"H:M-H:M\""),
    ],
)
def test_malformed_hours_name_file_and_line(tmp_path: Path, hours: str, problem: str) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM])
    write_lines(tmp_path / "review.json", [{"user_id": "u", "item_id": "x9", "date": "2020-01-01"}])
    with (tmp_path / "item.json").open("a", encoding="utf-8") as handle:
        handle.write('{"item_id": "y1", "hours": ' + hours + "}\n")
    expect_error(tmp_path, tmp_path / "item.json", 2, problem)


def test_a_malformed_task_loc_is_named(tmp_path: Path) -> None:
    folder = yelp_folder(tmp_path / "yelp")
    write_task(folder, 0, "u1", ["c1", "c2"], "c1", [32.3])
    expect_error(folder, folder / "tasks" / "task_0.json", 9, "field 'loc' must be [latitude, longitude]")


def test_bench_refuses_a_malformed_line_in_one_line_with_exit_2(tmp_path: Path, capsys) -> None:
    folder = yelp_folder(tmp_path / "yelp")
    with (folder / "review.json").open("a", encoding="utf-8") as handle:
        handle.write('{"user_id": "u1", "item_id": \n')
    code = main(
        [
            "bench",
            "--dataset",
            str(folder),
            "--methods",
            "popularity",
            "--users",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and f"{folder / 'review.json'}, line 6: not valid JSON" in lines[0]
