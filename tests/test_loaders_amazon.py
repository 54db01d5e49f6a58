"""The Amazon loaders (2023, and the 2014/2018 layout) on small files in the published formats,
written here: fields, gzip, Python-literal metadata, missing optional fields, the bounded review
sample, malformed input (one line naming file and line; exit 2, nothing written) and memory on a
generated file of 300,000 reviews."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from recgraph.cli import main
from world.datasets import load_path
from world.errors import DataFormatError, DatasetNotFoundError
from world.loaders.amazon import find_reviews, load_amazon, meta_file
from world.loaders.amazon_reviews import REVIEWS_KEPT_PER_ITEM

REPO = Path(__file__).resolve().parent.parent

REVIEWS_2023 = [
    {"rating": 5.0, "title": "Lovely", "text": "Warm <b>tone</b>.", "asin": "B01V", "parent_asin": "B01",
     "user_id": "AUSER1", "timestamp": 1_600_000_000_000, "helpful_vote": 0, "verified_purchase": True},
    {"rating": 2.0, "title": "", "text": "", "asin": "B02", "parent_asin": "B02", "user_id": "AUSER1",
     "timestamp": 1_600_000_100_000},
    {"rating": 4.0, "title": "Fine", "text": "Okay.", "asin": "B01X", "parent_asin": "B01",
     "user_id": "AUSER2", "timestamp": 1_500_000_000_500},
    {"user_id": "AUSER2", "parent_asin": "B09", "timestamp": 1_500_000_001_000},
]  # fmt: skip
META_2023 = [
    {"main_category": "Digital Music", "title": "Blue &amp; Gold", "categories": ["Digital Music", "Jazz"],
     "description": ["A late-night record.", "Remastered."], "features": ["Vinyl"], "store": "Kind Records",
     "price": 12.5, "details": {"Date First Available": "March 3, 2011"}, "parent_asin": "B01",
     "images": [], "videos": []},
    {"main_category": "Digital Music", "title": "Quiet Hours", "categories": [], "description": [],
     "features": [], "store": None, "price": None, "details": {}, "parent_asin": "B02"},
    {"title": "Never reviewed", "parent_asin": "B77"},
]  # fmt: skip


def write_lines(path: Path, lines: list[str], gz: bool = False) -> Path:
    """Write `lines` (one record each) to `path`, gzipped when asked."""
    text = "\n".join(lines) + "\n"
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def write_2023(folder: Path, gz: bool = False) -> Path:
    """Digital_Music.jsonl[.gz] and its metadata in `folder`; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    end = ".jsonl.gz" if gz else ".jsonl"
    write_lines(folder / f"Digital_Music{end}", [json.dumps(r) for r in REVIEWS_2023], gz)
    write_lines(folder / f"meta_Digital_Music{end}", [json.dumps(r) for r in META_2023], gz)
    return folder


@pytest.mark.parametrize("gz", [False, True])
def test_2023_reviews_and_metadata(tmp_path: Path, gz: bool) -> None:
    data = load_path(write_2023(tmp_path / "music", gz))
    assert data.name == "Digital_Music"
    assert data.has_time and data.presplit is None
    first, quiet, other, bare = data.interactions
    assert (first.user_id, first.item_id, first.timestamp, first.rating) == (
        "AUSER1",
        "B01",
        1_600_000_000.0,
        5.0,
    )
    assert first.review == "Lovely: Warm <b>tone</b>."  # review text is kept as written
    assert (quiet.item_id, quiet.review, quiet.rating) == ("B02", None, 2.0)
    assert (other.item_id, other.timestamp, other.review) == ("B01", 1_500_000_000.5, "Fine: Okay.")
    assert (bare.rating, bare.review) == (None, None)
    assert set(data.items) == {"B01", "B02", "B09"}  # B77 was never reviewed: not kept
    blue = data.items["B01"]
    assert blue.title == "Blue & Gold"
    assert blue.categories == ("Digital Music", "Jazz")
    assert blue.description == "A late-night record. Remastered."
    assert blue.attributes == {
        "brand": "Kind Records", "price": "12.5", "main_category": "Digital Music", "features": "Vinyl",
        "year": "2011",
    }  # fmt: skip
    assert data.items["B02"].categories == ("Digital Music",)  # main_category when the list is empty
    assert data.items["B02"].description is None
    assert data.items["B09"].title == "item B09"  # no metadata line


def test_2018_layout_gzip_and_python_literal_metadata(tmp_path: Path) -> None:
    reviews = [
        {"overall": 4.0, "reviewerID": "A1", "asin": "0001", "summary": "Good", "reviewText": "Nice songs.",
         "unixReviewTime": 1_300_000_000, "reviewTime": "03 13, 2011"},
        {"overall": 1.0, "reviewerID": "A2", "asin": "0002", "unixReviewTime": 1_300_000_500},
    ]  # fmt: skip
    write_lines(tmp_path / "reviews_CDs_5.json.gz", [json.dumps(r) for r in reviews], gz=True)
    meta = [  # the 2014 metadata: Python dict literals, category paths, repeated products
        "{'asin': '0001', 'title': 'First Album', 'categories': [['CDs & Vinyl', 'Pop']], 'brand': 'Acme',"
        " 'description': 'Debut.', 'related': {'also_bought': ['0002']}, 'salesRank': {'Music': 5}}",
        '{"asin": "0002", "title": "Second", "category": ["CDs & Vinyl", "Rock"], "date": "June 2, 1999",'
        ' "price": "$9.99", "description": ["Loud."]}',
        "{'asin': '0001', 'title': 'A repeat of the first product'}",
    ]
    write_lines(tmp_path / "meta_CDs.json.gz", meta, gz=True)
    reviews_path = find_reviews(tmp_path)
    assert reviews_path == tmp_path / "reviews_CDs_5.json.gz"
    assert meta_file(reviews_path) == tmp_path / "meta_CDs.json.gz"
    data = load_amazon(reviews_path)
    assert data.name == "CDs_5"
    one, two = data.interactions
    assert (one.user_id, one.item_id, one.timestamp, one.rating, one.review) == (
        "A1", "0001", 1_300_000_000.0, 4.0, "Good: Nice songs."
    )  # fmt: skip
    assert (two.review, two.rating) == (None, 1.0)
    first, second = data.items["0001"], data.items["0002"]
    assert (first.title, first.categories, first.description) == (
        "First Album",
        ("CDs & Vinyl", "Pop"),
        "Debut.",
    )
    assert first.attributes == {"brand": "Acme"}
    assert second.categories == ("CDs & Vinyl", "Rock")
    assert second.attributes == {"price": "$9.99", "year": "1999"}


def test_review_sample_keeps_the_earliest_texts_per_item(tmp_path: Path) -> None:
    count = REVIEWS_KEPT_PER_ITEM + 4
    stamps = [(count - k) * 1000 for k in range(count)]  # written newest first
    lines = [
        json.dumps({"user_id": f"U{k}", "parent_asin": "B1", "timestamp": t, "rating": 5, "text": f"r{k}"})
        for k, t in enumerate(stamps)
    ]
    write_lines(tmp_path / "Toys.jsonl", lines)
    data = load_path(tmp_path)
    with_text = sorted((e.timestamp, e.review) for e in data.interactions if e.review)
    assert len(data.interactions) == count
    assert [text for _, text in with_text] == [
        f"r{k}" for k in range(count - 1, count - 1 - REVIEWS_KEPT_PER_ITEM, -1)
    ]


def test_a_file_or_a_folder_names_the_category(tmp_path: Path) -> None:
    folder = write_2023(tmp_path / "music")
    assert len(load_path(folder / "Digital_Music.jsonl").interactions) == 4
    with pytest.raises(DatasetNotFoundError, match="metadata file"):
        load_path(folder / "meta_Digital_Music.jsonl")
    write_lines(folder / "Toys.jsonl", [json.dumps(REVIEWS_2023[0])])
    write_lines(folder / "meta_Toys.jsonl", [json.dumps(META_2023[0])])
    with pytest.raises(
        DatasetNotFoundError, match=r"several Amazon review files \(Digital_Music.jsonl, Toys"
    ):
        load_path(folder)


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    lines = [json.dumps(r) for r in REVIEWS_2023]
    lines[2] = lines[2][:-5]  # cut mid-object
    path = write_lines(tmp_path / "Books.jsonl", lines)
    with pytest.raises(DataFormatError) as caught:
        load_path(path)
    assert str(caught.value).startswith(f"{path}, line 3: not valid JSON")


@pytest.mark.parametrize(
    ("record", "problem"),
    [
        ({"parent_asin": "B1", "timestamp": 1}, "line 1: not an Amazon review"),
        ({"user_id": "U", "timestamp": 1}, "line 1: missing field 'parent_asin'"),
        ({"user_id": "U", "parent_asin": "B1"}, "line 1: missing field 'timestamp'"),
        ({"user_id": "U", "parent_asin": "B1", "timestamp": 1, "rating": "five"}, "'rating' is not a number"),
        ([1, 2], "line 1: expected a JSON object, found list"),
    ],
)
def test_records_missing_what_is_required(tmp_path: Path, record: object, problem: str) -> None:
    path = write_lines(tmp_path / "Books.jsonl", [json.dumps(record)])
    with pytest.raises(DataFormatError, match=problem):
        load_path(path)


def truncated_gzip(folder: Path) -> Path:
    """A gzipped 2023 reviews file cut in the middle of its stream."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({**REVIEWS_2023[0], "user_id": f"U{k}", "text": "x" * 50}) for k in range(3000)]
    whole = gzip.compress(("\n".join(lines) + "\n").encode())
    path = folder / "Books.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    return path


def test_truncated_gzip_names_file_and_line(tmp_path: Path) -> None:
    path = truncated_gzip(tmp_path)
    with pytest.raises(DataFormatError, match=r"line \d+: truncated gzip stream") as caught:
        load_path(path)
    assert caught.value.path == str(path) and caught.value.line and caught.value.line > 1


@pytest.mark.parametrize("case", ["truncated gzip", "malformed line", "nothing recognised"])
def test_bad_input_is_one_line_exit_2_and_nothing_written(
    tmp_path: Path, case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "data"
    if case == "truncated gzip":
        truncated_gzip(folder)
    elif case == "malformed line":
        folder.mkdir()
        write_lines(folder / "Books.jsonl", [json.dumps(REVIEWS_2023[0]), "{not json"])
    else:
        folder.mkdir()
        (folder / "notes.txt").write_text("hello\n")
    out = tmp_path / "run"
    argv = ["bench", "--dataset", str(folder), "--methods", "popularity", "--users", "5", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    expected = {
        "truncated gzip": "Books.jsonl.gz, line",
        "malformed line": "Books.jsonl, line 2: not valid JSON",
        "nothing recognised": "no dataset at",
    }[case]
    assert err.startswith("recgraph: error: ") and expected in err
    assert not out.exists()


@pytest.mark.slow
def test_200k_reviews_load_under_a_memory_bound(tmp_path: Path) -> None:
    """200,000 reviews (about 110 MB of JSON, gzipped here) load in under 56 MB of Python allocations
    (tracemalloc's peak): memory follows the interactions and the bounded text sample, not the file.
    Keeping every review's text alone would take about 85 MB (200,000 x ~420 characters)."""
    users, items, lines = 30_000, 6_000, 200_000
    body = "This record sounds better every time I play it, and the sleeve notes are a joy. " * 5
    path = tmp_path / "Books.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        for k in range(lines):
            item = f"B{k % items:09d}"
            record = {
                "rating": float(1 + k % 5), "title": "Worth it", "text": body, "asin": item,
                "parent_asin": item, "user_id": f"AG{(k * 7919) % users:026d}",
                "timestamp": 1_400_000_000_000 + k * 1000, "helpful_vote": 0, "verified_purchase": True,
            }  # fmt: skip
            out.write(json.dumps(record) + "\n")
    # A fresh process: tracemalloc counts every thread's allocations, and a background thread another
    # test left running (a preload, a trace flusher) would count against this load.
    code = (
        "import sys, tracemalloc\nfrom pathlib import Path\n"
        "from world.loaders.amazon import load_amazon\n"
        "from world.loaders.amazon_reviews import REVIEWS_KEPT_PER_ITEM\n"
        "tracemalloc.start()\n"
        "data = load_amazon(Path(sys.argv[1]))\n"
        "_, peak = tracemalloc.get_traced_memory()\n"
        "tracemalloc.stop()\n"
        "reviewed = sum(1 for e in data.interactions if e.review)\n"
        "print(len(data.interactions), len(data.items), reviewed, REVIEWS_KEPT_PER_ITEM, peak)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], cwd=REPO, capture_output=True, text=True, check=True
    )
    interactions, loaded_items, reviewed, kept, peak = map(int, done.stdout.split())
    assert interactions == lines and loaded_items == items
    assert reviewed == items * kept
    print(f"peak {peak / 2**20:.1f} MB")
    assert peak < 56 * 2**20, f"peak {peak / 2**20:.1f} MB"
