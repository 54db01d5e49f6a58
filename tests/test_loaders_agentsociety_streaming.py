"""The AgentSociety loader streams (tests/test_loaders_agentsociety*.py have its field tests): gzip by
content, JSON arrays read in pieces, the bounded review sample and catalog fields, a truncated gzip
(one line, exit 2, nothing written) and memory on a generated Yelp-shaped folder of 200,000 reviews."""

from __future__ import annotations

import calendar
import gzip
import json
import tracemalloc
from pathlib import Path

import pytest

from recgraph.cli import main
from tests.fixtures.agentsociety_shapes import write_task, yelp_folder
from world.data import Interaction
from world.errors import DataFormatError
from world.loaders import agentsociety_json
from world.loaders.agentsociety import DESCRIPTION_CHARS, STRUCTURED_ENTRIES, load_agentsociety
from world.loaders.agentsociety_json import read_json_records
from world.loaders.agentsociety_reviews import REVIEWS_KEPT_PER_ITEM


def write_records(path: Path, records: list[dict], gz: bool = False) -> Path:
    """`records` as JSON lines at `path`, gzipped when asked (the name stays as given)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


def gzip_in_place(folder: Path, *names: str) -> None:
    """Gzip each named file of `folder`, keeping its name (the loader reads the magic bytes)."""
    for name in names:
        path = folder / name
        path.write_bytes(gzip.compress(path.read_bytes()))


def test_gzipped_files_load_as_the_plain_ones(tmp_path: Path) -> None:
    plain = load_agentsociety(yelp_folder(tmp_path / "plain"), name="y")
    folder = yelp_folder(tmp_path / "gz")
    gzip_in_place(folder, "item.json", "review.json", "user.json")
    zipped = load_agentsociety(folder, name="y")
    assert zipped.interactions == plain.interactions and len(plain.interactions) == 5
    assert [(i.id, i.title, i.categories, i.attributes, i.structured) for i in zipped.items.values()] == [
        (i.id, i.title, i.categories, i.attributes, i.structured) for i in plain.items.values()
    ]
    assert zipped.users == plain.users == {"u1": {"name": "Ann", "review_count": "4"}}


def truncated_reviews(folder: Path) -> Path:
    """A Yelp-shaped folder whose review.json is a gzip stream cut in half."""
    yelp_folder(folder)
    review = {"user_id": "u1", "item_id": "c1", "stars": 4, "text": "x" * 60, "date": "2019-01-01"}
    whole = gzip.compress("".join(json.dumps(review) + "\n" for _ in range(3000)).encode())
    (folder / "review.json").write_bytes(whole[: len(whole) // 2])
    return folder / "review.json"


def test_a_truncated_gzip_is_named_with_its_line(tmp_path: Path) -> None:
    path = truncated_reviews(tmp_path / "yelp")
    with pytest.raises(DataFormatError, match=r"line \d+: truncated gzip stream") as caught:
        load_agentsociety(tmp_path / "yelp")
    assert caught.value.path == str(path) and caught.value.line is not None and caught.value.line > 1


def test_a_truncated_gzip_is_one_line_exit_2_and_nothing_written(tmp_path: Path, capsys) -> None:
    path = truncated_reviews(tmp_path / "yelp")
    out = tmp_path / "run"
    argv = ["bench", "--dataset", str(tmp_path / "yelp"), "--methods", "popularity", "--users", "1"]
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}, line " in err[0] and "truncated gzip stream" in err[0]
    assert not out.exists()


RECORDS = [{"item_id": f"i{k}", "tags": ["t" * 30] * 5, "note": "é" * 40} for k in range(40)]


@pytest.mark.parametrize("layout", ["one line", "indented", "gzip one line"])
def test_json_arrays_are_read_in_pieces(tmp_path: Path, monkeypatch, layout: str) -> None:
    monkeypatch.setattr(agentsociety_json, "PIECE_CHARS", 64)  # every element spans several pieces
    text = json.dumps(RECORDS, indent=2 if layout == "indented" else None)
    path = tmp_path / "item.json"
    if layout.startswith("gzip"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    read = list(read_json_records(path))
    assert [record for _, record in read] == RECORDS
    lines = text.splitlines()
    assert all(lines[line - 1].lstrip().startswith(("{", "[{")) for line, _ in read)
    assert read[-1][0] == (1 if layout != "indented" else 2 + 11 * 39)  # 11 lines per element


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ('[{"item_id": "a"},\n {"item_id": "b", "x": tru}]', 2, "not valid JSON: Expecting value"),
        ('[{"item_id": "a"},\n {"item_id": "b"}\n', 3, "not valid JSON: the array is not closed"),
        ('[{"item_id": "a"}]\n{"item_id": "b"}\n', 1, "not valid JSON: extra data after the array"),
        ('[{"item_id": "a"},\n {"item_id": "b\n"}]', 2, "not valid JSON: Invalid control character"),
    ],
)
def test_a_malformed_array_names_its_line_even_in_pieces(
    tmp_path: Path, monkeypatch, text: str, line: int, problem: str
) -> None:
    monkeypatch.setattr(agentsociety_json, "PIECE_CHARS", 8)
    path = tmp_path / "item.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as caught:
        list(read_json_records(path))
    assert (caught.value.line, caught.value.problem.startswith(problem)) == (line, True)


def test_lists_and_descriptions_are_bounded_in_order(tmp_path: Path) -> None:
    shelves = [{"count": str(500 - k), "name": f"shelf-{k}"} for k in range(100)]
    book = {"item_id": "g1", "title": "Long", "popular_shelves": shelves, "description": "word " * 1000}
    write_records(tmp_path / "item.json", [book, {**book, "item_id": "g2"}])
    write_records(tmp_path / "review.json", [{"user_id": "u", "item_id": "g1", "date": "2020-01-01"}])
    data = load_agentsociety(tmp_path)
    first, second = data.items["g1"], data.items["g2"]
    assert first.structured["popular_shelves"] == shelves[:STRUCTURED_ENTRIES]
    assert first.description is not None and first.description.endswith("…")
    assert len(first.description) <= DESCRIPTION_CHARS + 1 and first.description.startswith("word word")
    # names many items repeat are one string
    assert second.structured["popular_shelves"][3]["name"] is first.structured["popular_shelves"][3]["name"]


def dated(k: int) -> str:
    """A Yelp date k days into 2019 (k < 28 stays in January)."""
    return f"2019-01-{1 + k:02d} 12:00:00"


def test_review_texts_kept_are_each_item_s_earliest_and_the_task_users(tmp_path: Path) -> None:
    count = REVIEWS_KEPT_PER_ITEM + 5
    write_records(tmp_path / "item.json", [{"item_id": "b1"}, {"item_id": "b2"}])
    rows = [
        {"user_id": f"u{k}", "item_id": "b1", "stars": 3, "text": f"r{k}", "date": dated(count - k)}
        for k in range(count)
    ]  # written newest first
    rows.append({"user_id": "t", "item_id": "b1", "stars": 5, "text": "mine, late", "date": dated(26)})
    rows.append({"user_id": "t", "item_id": "b2", "stars": 2, "text": "mine too", "date": dated(27)})
    write_records(tmp_path / "review.json", rows)
    write_task(tmp_path, 0, "t", ["b1", "b2"], "b2", [-1, -1])
    data = load_agentsociety(tmp_path)
    kept = [(e.user_id, e.item_id, e.review) for e in data.interactions if e.review]
    earliest = [(f"u{k}", "b1", f"r{k}") for k in range(count - REVIEWS_KEPT_PER_ITEM, count)]
    assert kept == [*earliest, ("t", "b1", "mine, late"), ("t", "b2", "mine too")]
    assert len(data.interactions) == count + 2  # every review stays an interaction
    assert data.interactions[0] == Interaction("u0", "b1", data.interactions[0].timestamp, 3.0, None)


def yelp_like(folder: Path, reviews: int, items: int, users: int) -> None:
    """A generated Yelp-shaped folder (field names and shapes as published, values made up);
    review.json gzipped; one task for user 0."""
    write_records(
        folder / "item.json",
        [
            {"item_id": f"{k:022d}", "name": f"Place {k}", "address": f"{k} Main St", "city": "Tucson",
             "state": "AZ", "postal_code": "85701", "latitude": 32.2 + k / 1e5, "longitude": -110.9,
             "stars": 4.0, "review_count": 50, "is_open": 1, "categories": "Restaurants, Cafes",
             "attributes": {"WiFi": "u'free'", "RestaurantsPriceRange2": "2"},
             "hours": {"Monday": "8:0-18:30", "Friday": "18:0-2:0"}, "source": "yelp", "type": "business"}
            for k in range(items)
        ],
    )  # fmt: skip
    friends = ", ".join(f"F{v:021d}" for v in range(20))
    write_records(
        folder / "user.json",
        [
            {"user_id": f"U{u:021d}", "name": f"N{u}", "review_count": 9, "yelping_since": "2015-01-01",
             "friends": friends, "useful": 3, "elite": "", "average_stars": 4.1, "source": "yelp"}
            for u in range(users)
        ],
    )  # fmt: skip
    body = "The coffee was good and the staff were friendly; we came back the next morning. " * 5
    with gzip.open(folder / "review.json", "wt", encoding="utf-8", compresslevel=1) as out:
        for k in range(reviews):
            record = {
                "review_id": f"R{k:021d}", "user_id": f"U{k * 7919 % users:021d}",
                "item_id": f"{k % items:022d}",
                "stars": float(1 + k % 5), "useful": 0, "funny": 0, "cool": 0, "text": f"{k} {body}",
                "date": f"2018-{1 + k // 20_000:02d}-{1 + k % 28:02d} 10:{k % 60:02d}:00", "source": "yelp",
                "type": "review",
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")
    write_task(folder, 0, f"U{0:021d}", [f"{k:022d}" for k in range(20)], f"{0:022d}", [-1, -1])


@pytest.mark.slow
def test_200k_yelp_reviews_load_under_a_memory_bound(tmp_path: Path) -> None:
    """200,000 Yelp-shaped reviews (124 MB of JSON, gzipped here), 4,000 businesses and
    30,000 users load in under 68 MB of Python allocations (tracemalloc's peak; 59.8 MB when
    written): memory follows the interactions, the bounded text sample and the kept users, not the
    files. Keeping every review text alone would take about 95 MB (200,000 x ~470 characters); the
    loader before streaming peaked at 184 MB on this folder with review.json not gzipped."""
    reviews, items, users = 200_000, 4_000, 30_000
    yelp_like(tmp_path, reviews, items, users)
    tracemalloc.start()
    try:
        data = load_agentsociety(tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert (len(data.interactions), len(data.items), len(data.users)) == (reviews, items, users)
    task_user = f"U{0:021d}"
    by_item: dict[str, list[int]] = {}
    for index, event in enumerate(data.interactions):
        by_item.setdefault(event.item_id, []).append(index)
    events = data.interactions
    earliest = (sorted(group, key=lambda i: (events[i].timestamp, i))[:10] for group in by_item.values())
    expected = {index for group in earliest for index in group}
    expected |= {i for i, e in enumerate(data.interactions) if e.user_id == task_user}
    assert {i for i, e in enumerate(data.interactions) if e.review} == expected
    assert REVIEWS_KEPT_PER_ITEM == 10 and len(expected) > items * REVIEWS_KEPT_PER_ITEM
    event = data.interactions[123_457]  # k = 123457: user k * 7919 % 30000, item 3457, 2018-07-06 10:37
    assert (event.user_id, event.item_id, event.rating) == (
        f"U{123_457 * 7919 % users:021d}",
        f"{3457:022d}",
        3.0,
    )
    assert event.timestamp == calendar.timegm((2018, 7, 6, 10, 37, 0)) and event.review is None
    place = data.items[f"{7:022d}"]
    assert place.structured["hours"] == {"Monday": "8:0-18:30", "Friday": "18:0-2:0"}
    assert place.categories == ("Restaurants", "Cafes") and place.attributes["city"] == "Tucson"
    assert data.presplit is not None and data.presplit[task_user].target == f"{0:022d}"
    print(f"peak {peak / 2**20:.1f} MB")
    assert peak < 68 * 2**20, f"peak {peak / 2**20:.1f} MB"
