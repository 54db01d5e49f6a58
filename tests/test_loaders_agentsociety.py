"""Tests of the AgentSociety / AgentRecBench loader on small fixtures written here."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from recgraph.cli import main
from tests.fixtures.agentsociety_shapes import (
    GOODREADS_BOOKS,
    amazon_folder,
    goodreads_folder,
    write_task,
    yelp_folder,
)
from world.data import Interaction, PresplitUser
from world.errors import DataFormatError
from world.loaders.agentsociety import load_agentsociety, parse_time
from world.loaders.agentsociety_fields import contributors, weekly_hours

YELP_ITEM = {
    "item_id": "b1",
    "name": "Cafe Uno",
    "categories": "Coffee & Tea, Cafes, ",
    "stars": 4.5,
    "city": "Tucson",
    "latitude": 32.25,
    "longitude": -110.9,
    "is_open": True,
    "attributes": {"WiFi": "free"},
    "hours": None,
    "source": "yelp",
}
AMAZON_ITEM = {
    "item_id": "B00X",
    "title": "Guitar Strings",
    "categories": ["Musical Instruments", "Strings"],
    "description": ["Bright tone.", "Long life."],
    "price": 9.99,
    "features": ["nickel"],
}
GOODREADS_ITEM = {
    "item_id": 77,
    "title": "",
    "title_without_series": "Poems",
    "publication_year": "1999",
}
BARE_ITEM = {"item_id": "x9"}

YELP_TIME = calendar.timegm((2018, 7, 7, 22, 9, 11))
GOODREADS_TIME = calendar.timegm((2017, 7, 30, 14, 44, 10))  # 07:44:10 at -0700
AMAZON_TIME = 1_600_000_000


def write_lines(path: Path, records: list[dict]) -> Path:
    """Write `records` as JSON lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def reviews() -> list[dict]:
    """u1 reviews three items (out of time order in the file), u2 one item."""
    return [
        {
            "user_id": "u1",
            "item_id": "b1",
            "stars": 5,
            "text": "Great",
            "date": "2018-07-07 22:09:11",
        },
        {"user_id": "u1", "item_id": "77", "rating": "3", "date": "Sun Jul 30 07:44:10 -0700 2017"},
        {"user_id": "u1", "item_id": "B00X", "stars": 4.0, "timestamp": AMAZON_TIME * 1000},
        {"user_id": "u2", "item_id": "x9", "review_text": " fine ", "date": "2019-01-01"},
    ]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A dataset folder with items, users and reviews but no tasks."""
    write_lines(tmp_path / "item.json", [YELP_ITEM, AMAZON_ITEM, GOODREADS_ITEM, BARE_ITEM])
    users = [{"user_id": "u1", "name": "Ann", "review_count": 3, "friends": "a, b", "elite": None}]
    write_lines(tmp_path / "user.json", users)
    write_lines(tmp_path / "review.json", reviews())
    return tmp_path


def add_task(folder: Path, n: int, task: dict, truth: dict, flat: bool = False) -> None:
    """Write task_<n>.json and groundtruth_<n>.json (in subfolders unless `flat`)."""
    tasks = folder if flat else folder / "tasks"
    truths = folder if flat else folder / "groundtruth"
    tasks.mkdir(exist_ok=True)
    truths.mkdir(exist_ok=True)
    (tasks / f"task_{n}.json").write_text(json.dumps(task, indent=4), encoding="utf-8")
    (truths / f"groundtruth_{n}.json").write_text(json.dumps(truth), encoding="utf-8")


def task_for(user: str, candidates: list) -> dict:
    """An AgentSociety recommendation task."""
    return {
        "type": "recommendation",
        "user_id": user,
        "candidate_category": "business",
        "candidate_list": candidates,
        "loc": [-1, -1],
    }


def test_items_keep_title_categories_description_and_scalar_attributes(folder: Path) -> None:
    data = load_agentsociety(folder)
    assert list(data.items) == ["b1", "B00X", "77", "x9"]
    cafe = data.items["b1"]
    assert cafe.title == "Cafe Uno"
    assert cafe.categories == ("Coffee & Tea", "Cafes")
    assert cafe.description is None
    assert cafe.attributes == {
        "stars": "4.5",
        "city": "Tucson",
        "latitude": "32.25",
        "longitude": "-110.9",
        "is_open": "true",
        "source": "yelp",
    }
    assert cafe.structured == {"attributes": {"WiFi": "free"}}  # "hours": null is no field
    strings = data.items["B00X"]
    assert strings.title == "Guitar Strings"
    assert strings.categories == ("Musical Instruments", "Strings")
    assert strings.description == "Bright tone. Long life."
    assert strings.attributes == {"price": "9.99"}
    assert strings.structured == {"features": ["nickel"]}
    poems = data.items["77"]
    assert (poems.title, poems.attributes) == ("Poems", {"year": "1999"})
    assert data.items["x9"].title == "item x9"


def test_reviews_become_interactions_with_epoch_seconds(folder: Path) -> None:
    data = load_agentsociety(folder, name="yelp-small")
    assert data.name == "yelp-small"
    assert data.source == str(folder)
    assert data.has_time is True
    assert data.interactions == [
        Interaction("u1", "b1", float(YELP_TIME), 5.0, "Great"),
        Interaction("u1", "77", float(GOODREADS_TIME), 3.0, None),
        Interaction("u1", "B00X", float(AMAZON_TIME), 4.0, None),
        Interaction("u2", "x9", float(calendar.timegm((2019, 1, 1, 0, 0, 0))), None, "fine"),
    ]
    assert data.presplit is None


def test_users_keep_scalar_attributes_but_not_friends(folder: Path) -> None:
    data = load_agentsociety(folder)
    assert data.users == {"u1": {"name": "Ann", "review_count": "3"}}


def test_reviews_without_any_date_use_file_order(tmp_path: Path) -> None:
    write_lines(tmp_path / "item.json", [BARE_ITEM, AMAZON_ITEM])
    undated = [{"user_id": "u", "item_id": "B00X"}, {"user_id": "u", "item_id": "x9"}]
    write_lines(tmp_path / "review.json", undated)
    data = load_agentsociety(tmp_path)
    assert data.has_time is False
    assert [(i.item_id, i.timestamp) for i in data.interactions] == [("B00X", 0.0), ("x9", 1.0)]
    assert data.users == {}


def test_tasks_fix_history_valid_target_and_candidates(folder: Path) -> None:
    pool = ["B00X", "x9", "b1", "77"]
    add_task(folder, 0, task_for("u1", pool), {"ground truth": "B00X"})
    add_task(folder, 1, task_for("u3", ["x9", "b1"]), {"ground truth": "b1"})
    data = load_agentsociety(folder)
    assert data.presplit == {
        # u1 by time: 77 (2017), b1 (2018), B00X (2020, the target, left out)
        "u1": PresplitUser(history=("77",), valid="b1", target="B00X", candidates=tuple(pool)),
        "u3": PresplitUser(history=(), valid=None, target="b1", candidates=("x9", "b1")),
    }
    assert data.user_ids() == ["u1", "u2", "u3"]


def test_flat_task_layout_is_read_too(folder: Path) -> None:
    add_task(folder, 7, task_for("u2", [77, "x9"]), {"ground truth": "x9"}, flat=True)
    data = load_agentsociety(folder)
    assert data.presplit == {
        "u2": PresplitUser(history=(), valid=None, target="x9", candidates=("77", "x9")),
    }


def test_a_single_json_array_is_accepted(tmp_path: Path) -> None:
    items = json.dumps([BARE_ITEM, AMAZON_ITEM], indent=2)
    (tmp_path / "item.json").write_text(items, encoding="utf-8")
    write_lines(tmp_path / "review.json", [{"user_id": "u", "item_id": "x9", "date": "2020-01-02"}])
    data = load_agentsociety(tmp_path)
    assert list(data.items) == ["x9", "B00X"]
    assert data.interactions[0].timestamp == calendar.timegm((2020, 1, 2, 0, 0, 0))


def test_parse_time_reads_every_documented_form() -> None:
    assert parse_time("2018-07-07 22:09:11") == YELP_TIME
    assert parse_time("2018-07-07T22:09:11+02:00") == YELP_TIME - 7200
    assert parse_time("Sun Jul 30 07:44:10 -0700 2017") == GOODREADS_TIME
    assert parse_time(AMAZON_TIME * 1000) == AMAZON_TIME
    assert parse_time(str(AMAZON_TIME)) == AMAZON_TIME
    assert parse_time("last tuesday") is None
    assert parse_time(True) is None


def expect_error(folder: Path, path: Path, line: int | None, problem: str) -> None:
    """Loading `folder` fails naming `path`, `line` and `problem`."""
    with pytest.raises(DataFormatError) as caught:
        load_agentsociety(folder)
    error = caught.value
    assert (error.path, error.line) == (str(path), line)
    assert problem in error.problem
    where = f"{path}, line {line}: " if line is not None else f"{path}: "
    assert str(error).startswith(where)


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


def test_goodreads_author_objects_series_and_shelves_keep_their_shapes(tmp_path: Path) -> None:
    data = load_agentsociety(goodreads_folder(tmp_path / "goodreads"))
    book = data.items["g2"]
    assert book.structured["authors"] == [
        {"author_id": "100", "role": ""},
        {"author_id": "200", "role": "Illustrator"},
    ]
    assert book.structured["popular_shelves"] == GOODREADS_BOOKS[1]["popular_shelves"]
    assert "similar_books" not in book.structured and "series" not in book.structured  # empty lists
    assert data.items["g1"].structured["series"] == ["S1"]
    assert book.attributes == {"year": "2001", "source": "goodreads", "type": "book"}
    assert contributors(book.structured) == [
        ("author 100", "author 100"),
        ("author 200", "author 200 (Illustrator)"),
    ]
    assert data.presplit == {
        "u1": PresplitUser(
            history=("g1", "g2"), valid="g3", target="g8", candidates=("g4", "g5", "g6", "g7", "g8")
        ),
    }


def test_yelp_hours_attributes_and_location_keep_their_shapes(tmp_path: Path) -> None:
    data = load_agentsociety(yelp_folder(tmp_path / "yelp"))
    late = data.items["c1"]
    assert late.categories == ("Restaurants", "Cafes")
    assert late.structured == {
        "attributes": {"RestaurantsPriceRange2": "2", "WiFi": "u'free'"},
        "hours": {"Friday": "18:0-2:0", "Saturday": "18:0-2:0"},
    }
    assert weekly_hours(late.structured) == {4: (1080, 1560), 5: (1080, 1560)}
    assert weekly_hours(data.items["c4"].structured) == {5: (0, 1440)}  # "0:0-0:0": open all day
    assert (late.attributes["city"], late.attributes["latitude"], late.attributes["is_open"]) == (
        "Tucson",
        "32.22",
        "1",
    )
    far, bare = (
        data.items["c3"],
        data.items["c4"],
    )  # optional fields missing: no hours, no coordinates, no city
    assert (
        "hours" not in far.structured and "latitude" not in far.attributes and "city" not in bare.attributes
    )
    assert data.users["u1"] == {"name": "Ann", "review_count": "4"}


def test_amazon_category_paths_are_flattened_and_kept(tmp_path: Path) -> None:
    data = load_agentsociety(amazon_folder(tmp_path / "amazon"))
    capo = data.items["B01"]
    assert capo.categories == ("Musical Instruments", "Guitars", "Accessories", "Capos")
    assert capo.structured == {
        "categories": [["Musical Instruments", "Guitars", "Accessories"], ["Musical Instruments", "Capos"]],
        "features": ["brass", "spring clamp"],
        "details": {"Brand": "Acme", "Item Weight": "2 ounces"},
    }  # images dropped: media URLs
    assert capo.description == "Quick release. Fits six strings."
    assert (
        data.items["B02"].categories == ("Musical Instruments", "Strings")
        and data.items["B02"].structured == {}
    )
    assert data.items["B03"].structured == {} and data.items["B03"].attributes == {}
    assert data.interactions[0].timestamp == 1_600_000_000.0


def test_a_task_location_becomes_the_user_s_place(tmp_path: Path) -> None:
    folder = yelp_folder(tmp_path / "yelp")
    write_task(folder, 0, "u1", ["c1", "c2"], "c1", [32.3, -110.8])
    write_task(folder, 1, "u2", ["c1", "c2"], "c2", [-1, -1])
    data = load_agentsociety(folder)
    assert data.users["u1"] == {"name": "Ann", "review_count": "4", "latitude": "32.3", "longitude": "-110.8"}
    assert "u2" not in data.users


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
