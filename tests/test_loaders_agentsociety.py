"""Tests of the AgentSociety / AgentRecBench loader on small fixtures written here: items, reviews,
users, tasks and times (malformed input: test_loaders_agentsociety_errors.py; the datasets' real
field shapes: test_loaders_agentsociety_shapes.py)."""

from __future__ import annotations

import calendar
import json
from pathlib import Path

import pytest

from tests.fixtures.agentsociety_shapes import write_lines
from tests.fixtures.agentsociety_tasks import BARE_ITEM, add_task, task_for
from world.data import Interaction, PresplitUser
from world.loaders.agentsociety import load_agentsociety, parse_time

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
YELP_TIME = calendar.timegm((2018, 7, 7, 22, 9, 11))
GOODREADS_TIME = calendar.timegm((2017, 7, 30, 14, 44, 10))  # 07:44:10 at -0700
AMAZON_TIME = 1_600_000_000


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
