"""Tests of the MemRec-converted InstructRec loader on small fixtures written here.

The fixtures follow what MemRec's converter writes with pandas `to_csv(sep="\\t")`: a plain
header, values with a tab, a newline or a quote wrapped in double quotes (quotes doubled),
missing values empty or rendered as "nan".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from world.data import Interaction
from world.datasets import load_path
from world.errors import DataFormatError
from world.loaders.instructrec import load_instructrec

NAME = "instructrec-books"
META = (
    "item_id\tasin\ttitle\tdescription\n"
    '0\tB0A\t"Dune ""Deluxe"""\t"A desert planet.\n<b>Spice</b>\tand worms."\n'
    "1\tB0B\tEmma\t\n"
    "2\tB0C\tnan\tA novel.\n"
)
INTER = "user_id\titem_id\trating\ttimestamp\n0\t1\t5.0\t1\n0\t0\t4.0\t2\n0\t2\t5.0\t3\n1\t1\t5.0\t1\n"
INSTRUCTION = (
    "user_id\tinstruction\tpersona\n"
    '0\t"I want ""hard"" sci-fi,\nplease."\tnan\n'
    "1\tClassics only.\tA retired teacher who reads Austen.\n"
)
TEXT = "user_id\titem_id\treview_text\n0\t1\tLoved it.\n1\t1\tnan\n"


def write(folder: Path, **files: str) -> Path:
    """Write `<NAME>.<suffix>` files (keyword = suffix) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for suffix, text in files.items():
        (folder / f"{NAME}.{suffix}").write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder named like the dataset holding the four files."""
    return write(tmp_path / NAME, meta=META, inter=INTER, instruction=INSTRUCTION, text=TEXT)


def test_meta_gives_titles_descriptions_and_attributes(folder: Path) -> None:
    data = load_instructrec(folder)
    assert data.name == NAME
    assert data.source == str(folder)
    assert list(data.items) == ["0", "1", "2"]
    dune = data.items["0"]
    assert dune.title == 'Dune "Deluxe"'
    assert dune.description == "A desert planet. Spice and worms."
    assert dune.attributes == {"asin": "B0A"}
    assert dune.categories == ()
    assert (data.items["1"].title, data.items["1"].description) == ("Emma", None)
    assert data.items["2"].title == "item 2"


def test_inter_positions_give_interactions_without_time(folder: Path) -> None:
    data = load_instructrec(folder)
    assert data.has_time is False
    assert data.interactions == [
        Interaction("0", "1", 1.0, 5.0, "Loved it."),
        Interaction("0", "0", 2.0, 4.0, None),
        Interaction("0", "2", 3.0, 5.0, None),
        Interaction("1", "1", 1.0, 5.0, None),
    ]
    assert data.presplit is None
    assert data.user_ids() == ["0", "1"]


def test_instructions_and_personas(folder: Path) -> None:
    data = load_instructrec(folder)
    assert data.instructions == {"0": 'I want "hard" sci-fi,\nplease.', "1": "Classics only."}
    assert data.users == {"0": {}, "1": {"persona": "A retired teacher who reads Austen."}}


def test_epoch_timestamps_and_typed_headers(tmp_path: Path) -> None:
    inter = "user_id:token\titem_id:token\ttimestamp:float\n7\t1\t1600000000\n7\t0\t1500000000.5\n"
    meta = "item_id:token\ttitle:token_seq\tcategories:token_seq\n0\tA\tx, y\n1\tB\t\n"
    instruction = "user_id:token\tinstruction:token_seq\tage:token\n7\tSomething light.\t41\n"
    folder = write(tmp_path / "any", inter=inter, meta=meta, instruction=instruction)
    data = load_instructrec(folder, name=NAME)
    assert data.has_time is True
    assert [(i.item_id, i.timestamp, i.rating) for i in data.interactions] == [
        ("1", 1_600_000_000.0, None),
        ("0", 1_500_000_000.5, None),
    ]
    assert data.items["0"].categories == ("x", "y")
    assert data.instructions == {"7": "Something light."}
    assert data.users == {"7": {"age": "41"}}


def test_name_falls_back_to_the_only_instruction_file(tmp_path: Path) -> None:
    folder = write(tmp_path / "download", meta=META, inter=INTER, instruction=INSTRUCTION)
    data = load_instructrec(folder)
    assert data.name == NAME
    assert len(data.interactions) == 4


def test_inter_without_timestamp_uses_file_order(tmp_path: Path) -> None:
    inter = "user_id\titem_id\n0\t2\n0\t1\n"
    folder = write(tmp_path / NAME, meta=META, inter=inter, instruction=INSTRUCTION)
    data = load_instructrec(folder)
    assert data.has_time is False
    assert [(i.item_id, i.timestamp, i.rating) for i in data.interactions] == [
        ("2", 0.0, None),
        ("1", 1.0, None),
    ]


def expect_error(folder: Path, path: Path, line: int | None, problem: str) -> None:
    """Loading `folder` fails naming `path`, `line` and `problem`."""
    with pytest.raises(DataFormatError) as caught:
        load_instructrec(folder)
    error = caught.value
    assert (error.path, error.line) == (str(path), line)
    assert problem in error.problem
    where = f"{path}, line {line}: " if line is not None else f"{path}: "
    assert str(error).startswith(where)


@pytest.mark.parametrize(
    ("suffix", "text", "line", "problem"),
    [
        # item 0's quoted description spans lines 2-3, so an appended row is on line 6
        (
            "meta",
            META + "3\tB0D\tToo\tmany\tfields\n",
            6,
            "expected 4 tab-separated fields, found 5",
        ),
        ("meta", META + "1\tB0E\tAgain\t\n", 6, "duplicate item id '1'"),
        ("meta", META + '4\tB0F\t"Unclosed\tdesc\n', 6, "malformed row: "),
        ("meta", "asin\ttitle\nB0A\tDune\n", 1, "header lacks column(s) item_id"),
        ("meta", "item_id\ttitle\ttitle\n0\tA\tB\n", 1, "empty or repeated column"),
        ("meta", "", 1, "empty file: expected a header line"),
        ("inter", INTER + "1\t9\t5.0\t2\n", 6, "unknown item id '9' (not in the .meta file)"),
        ("inter", INTER + "1\t0\t5.0\tyesterday\n", 6, "field 'timestamp' is not a number"),
        ("inter", INTER + "\t0\t5.0\t2\n", 6, "empty field 'user_id'"),
        ("inter", INTER + "nan\t0\t5.0\t2\n", 6, "empty field 'user_id'"),
        ("instruction", INSTRUCTION + "1\tAgain.\tnan\n", 5, "duplicate user id '1'"),
        ("instruction", "user_id\tpersona\n0\tA reader\n", None, "no instructions"),
        ("text", "user_id\treview_text\n0\tLoved it.\n", 1, "header lacks column(s) item_id"),
    ],
)
def test_malformed_files_name_file_line_and_problem(
    folder: Path, suffix: str, text: str, line: int | None, problem: str
) -> None:
    path = write(folder, **{suffix: text}) / f"{NAME}.{suffix}"
    expect_error(folder, path, line, problem)


def test_missing_file_is_named(folder: Path) -> None:
    (folder / f"{NAME}.instruction").unlink()
    expect_error(folder, folder / f"{NAME}.instruction", None, "file not found")


def test_yelp_conversion_keeps_the_fields_memrec_names(tmp_path: Path) -> None:
    """MemRec's Yelp context names categories (cuisine) and attributes (price, WiFi) as key
    metadata: the converter copies every mapping column into `.meta`, and the loader keeps them;
    its `str(None)` persona counts as missing."""
    meta = (
        "item_id\tasin\ttitle\tcategories\tattributes\tdescription\n"
        "0\tbiz-a\tTaco Stop\tMexican, Restaurants\t{'RestaurantsPriceRange2': '1', 'WiFi': 'free'}\t\n"
        "1\tbiz-b\tNoodle Bar\tRestaurants; Ramen\tNone\tBroth all day.\n"
    )
    inter = "user_id\titem_id\trating\ttimestamp\n0\t0\t5.0\t1\n0\t1\t5.0\t2\n0\t0\t5.0\t3\n"
    instruction = "user_id\tinstruction\tpersona\n0\tCheap eats near campus.\tNone\n"
    folder = write(tmp_path / "instructrec-yelp", meta=meta, inter=inter, instruction=instruction)
    data = load_path(folder)
    taco, noodle = data.items["0"], data.items["1"]
    assert taco.categories == ("Mexican", "Restaurants")
    assert taco.attributes == {
        "asin": "biz-a",
        "attributes": "{'RestaurantsPriceRange2': '1', 'WiFi': 'free'}",
    }
    assert (noodle.categories, noodle.description, noodle.attributes) == (
        ("Restaurants", "Ramen"), "Broth all day.", {"asin": "biz-b"}
    )  # fmt: skip
    assert data.users == {"0": {}} and data.instructions == {"0": "Cheap eats near campus."}
