"""The AgentSociety / AgentRecBench loader on folders in the datasets' real field shapes
(tests/fixtures/agentsociety_shapes.py): Goodreads' authors, series and shelves, Yelp's hours,
attributes and places, Amazon's category paths, and a task's location."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.agentsociety_shapes import (
    GOODREADS_BOOKS,
    amazon_folder,
    goodreads_folder,
    write_task,
    yelp_folder,
)
from world.data import PresplitUser
from world.loaders.agentsociety import load_agentsociety
from world.loaders.agentsociety_fields import contributors, weekly_hours


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
