"""`recgraph datasets` lists every readable dataset and reports a bad one without aborting;
`recgraph bench --help` shows every default and the registered methods."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphs.registry import METHODS
from recgraph.cli import main
from recgraph.datasets_command import discover, fields_of
from world.environment import get_environment


def test_datasets_lists_the_good_and_reports_the_bad(
    tiny_dataset_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tiny_dataset_dir.parent
    bad = root / "bad"
    bad.mkdir()
    header = "user_id:token\titem_id:token\trating:float\ttimestamp:float"
    (bad / "bad.inter").write_text(f"{header}\nu1\t1\t4\tsoon\n")
    (bad / "bad.item").write_text("item_id:token\tmovie_title:token_seq\n1\tAlpha\n")
    assert discover(root) == [str(bad), str(tiny_dataset_dir)]
    assert main(["datasets", str(root)]) == 1
    out, err = capsys.readouterr()
    row = next(line for line in out.splitlines() if "tiny" in line)
    # 4 users, 6 items, 13 interactions; u4's two are too few to split
    assert [cell.strip() for cell in row.split("│")[2:6]] == ["4", "6", "13", "3"]
    assert fields_of(get_environment(str(tiny_dataset_dir)).dataset) == "timestamps, ratings, categories"
    assert err == (
        f"recgraph: cannot read dataset {str(bad)!r}: {bad / 'bad.inter'}, line 2: "
        "field 'timestamp' is not a number: 'soon'\n"
    )


def test_bench_help_shows_defaults_and_methods(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for value in ("200", "10", "ml-100k", "0", "classic", "all", "4"):
        assert f"(default: {value})" in text
    for name, spec in METHODS.items():
        assert f"{name} {spec.kind} {spec.summary}" in text
