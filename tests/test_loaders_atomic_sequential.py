"""Loaders 1 (RecBole atomic, incl. the embedded ml-100k) and 3 (sequential layout)."""

import shutil
from pathlib import Path

import pytest

from world.datasets import load_dataset, load_path, recbole_example_folder
from world.errors import DataFormatError, DatasetNotFoundError
from world.loaders.recbole_atomic import load_recbole_atomic, split_categories


def test_ml100k_from_the_recbole_wheel() -> None:
    data = load_dataset("ml-100k")
    assert len(data.items) == 1682
    assert len({i.user_id for i in data.interactions}) == 943
    assert len(data.interactions) == 100_000
    assert data.has_time
    toy_story = data.items["1"]
    assert toy_story.title == "Toy Story"
    assert toy_story.categories == ("Animation", "Children's", "Comedy")
    assert toy_story.attributes["year"] == "1995"
    assert "age" in data.users["1"]


def test_tiny_atomic_dataset(tiny_dataset_dir: Path) -> None:
    data = load_recbole_atomic(tiny_dataset_dir)
    assert data.items["2"].categories == ("Romance", "Comedy")
    first = data.interactions[0]
    assert (first.user_id, first.item_id, first.timestamp, first.rating) == ("u1", "3", 300.0, 4.0)


def test_category_separators() -> None:
    assert split_categories("Pop; Dance Pop") == ("Pop", "Dance Pop")
    assert split_categories("Action Sci-Fi") == ("Action", "Sci-Fi")
    assert split_categories("Books, Fiction") == ("Books", "Fiction")


def copy_ml100k(tmp_path: Path) -> Path:
    folder = tmp_path / "ml-100k"
    folder.mkdir()
    source = recbole_example_folder("ml-100k")
    for suffix in ("inter", "item"):
        shutil.copy(source / f"ml-100k.{suffix}", folder / f"ml-100k.{suffix}")
    return folder


def test_truncated_inter_file_names_file_and_line(tmp_path: Path) -> None:
    folder = copy_ml100k(tmp_path)
    inter = folder / "ml-100k.inter"
    raw = inter.read_bytes()
    cut = raw.index(b"\n", len(raw) // 2) + 6  # stop inside the next row's second column
    inter.write_bytes(raw[:cut])
    line = raw[:cut].count(b"\n") + 1
    with pytest.raises(DataFormatError) as error:
        load_recbole_atomic(folder)
    assert str(inter) in str(error.value)
    assert f"line {line}:" in str(error.value)
    assert "expected 4 tab-separated fields, found" in str(error.value)


@pytest.mark.parametrize(
    ("header", "row", "problem"),
    [
        ("user_id\titem_id:token", "1\t1", "bad header column 'user_id'"),
        ("user_id:token\titem:token", "1\t1", "header lacks required field(s) item_id"),
        (
            "user_id:token\titem_id:token\ttimestamp:float",
            "1\t1\tyesterday",
            "field 'timestamp' is not a number: 'yesterday'",
        ),
        ("user_id:token\titem_id:token", "1\t999", "unknown item id '999'"),
    ],
)
def test_malformed_inter_rows(tiny_dataset_dir: Path, header: str, row: str, problem: str) -> None:
    inter = tiny_dataset_dir / "tiny.inter"
    inter.write_text(f"{header}\n{row}\n")
    with pytest.raises(DataFormatError) as error:
        load_recbole_atomic(tiny_dataset_dir)
    assert str(inter) in str(error.value)
    assert problem in str(error.value)
    expected_line = 1 if "header" in problem else 2
    assert error.value.line == expected_line


def test_duplicate_item_row(tiny_dataset_dir: Path) -> None:
    item = tiny_dataset_dir / "tiny.item"
    item.write_text(item.read_text() + "1\tAgain\t2000\tDrama\n")
    with pytest.raises(DataFormatError, match=r"line 8: duplicate item id '1'"):
        load_recbole_atomic(tiny_dataset_dir)


def test_sequential_amazon_cds_dense(shared_data: Path) -> None:
    data = load_path(shared_data / "CDs-100-user-dense")
    assert data.name == "CDs-100-user-dense"
    assert not data.has_time
    assert data.presplit is not None and len(data.presplit) == 100
    user = data.presplit["2867"]
    assert user.target == "1370"
    assert user.valid == "3510"
    assert user.history == ("10410", "4233", "213", "9798", "18245", "24746")
    assert user.candidates is not None and len(user.candidates) == 100
    assert data.items["2"].title == "Revolutions: The Very Best Of Steve Winwood"


def test_sequential_folder_with_two_splits_asks_for_one(shared_data: Path) -> None:
    with pytest.raises(DatasetNotFoundError, match="several sequential splits"):
        load_path(shared_data)


def test_sequential_unknown_item(tmp_path: Path) -> None:
    (tmp_path / "s.item").write_text("item_id:token\ttitle:token_seq\n1\tOne\n2\tTwo\n")
    test = tmp_path / "s.test.inter"
    test.write_text("user_id:token\titem_id_list:token_seq\titem_id:token\nu\t1 2\t3\n")
    with pytest.raises(DataFormatError, match=r"s.test.inter, line 2: unknown item id '3'"):
        load_path(tmp_path)


def test_unknown_dataset_name() -> None:
    with pytest.raises(DatasetNotFoundError, match="unknown dataset 'ml-20m'"):
        load_dataset("ml-20m")


def test_a_dataset_path_spelt_two_ways_shares_one_cache_key(
    tiny_dataset_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative or absolute, from any folder: the cache key names the data, not the spelling."""
    from world.paths import dataset_key

    monkeypatch.chdir(tiny_dataset_dir.parent)
    relative = load_dataset("./tiny")
    absolute = load_dataset(str(tiny_dataset_dir))
    assert relative.source == absolute.source == str(tiny_dataset_dir.resolve())
    assert dataset_key(relative) == dataset_key(absolute)
