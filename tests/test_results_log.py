"""world/results_log.py: the append-only log runs resume from; a log opened with `remember=False`
writes each record durably without keeping it (ChainRec's trajectory rows)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from world.errors import RecgraphError
from world.results_log import ResultsLog

PROTOCOL = {"dataset": "d", "users": 2}


def record(user: str) -> dict[str, object]:
    """A finished user of method "m"."""
    return {"method": "m", "user_id": user, "ranking": ["b", "a"]}


def test_a_remembering_log_reads_its_own_appends_back(tmp_path: Path) -> None:
    log = ResultsLog(tmp_path / "r.jsonl", PROTOCOL)
    log.append(record("1"))
    assert log.done("m")["1"]["ranking"] == ["b", "a"]


def test_a_log_that_does_not_remember_writes_every_record_and_keeps_only_the_file_s(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    ResultsLog(path, PROTOCOL).append(record("1"))
    log = ResultsLog(path, PROTOCOL, remember=False)
    log.append(record("2"))
    assert set(log.done("m")) == {"1"}  # what the file held when opened
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["user_id"] for line in lines] == ["1", "2"]
    assert all(line["protocol"] == PROTOCOL for line in lines)
    assert set(ResultsLog(path, PROTOCOL).done("m")) == {"1", "2"}  # reopened: both


def test_a_compacting_reader_rewrites_each_record_it_reads(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = ResultsLog(path, PROTOCOL)
    writer.append(record("1"))
    writer.append(record("2"))
    seen: list[str] = []

    def compact(row: dict[str, object]) -> dict[str, object]:
        seen.append(str(row["user_id"]))
        return {**row, "ranking": list(reversed(row["ranking"]))}  # type: ignore[call-overload]

    reader = ResultsLog(path, PROTOCOL, compact=compact)
    assert seen == ["1", "2"]
    assert reader.done("m")["2"]["ranking"] == ["a", "b"]
    writer.append(record("3"))  # appends are kept as written, never compacted
    assert writer.done("m")["3"]["ranking"] == ["b", "a"]


def test_another_protocol_or_bytes_that_are_not_utf8_get_a_clear_error_before_any_compact(
    tmp_path: Path,
) -> None:
    path = tmp_path / "r.jsonl"
    ResultsLog(path, PROTOCOL).append(record("1"))

    def compact(row: dict[str, object]) -> dict[str, object]:
        return {"method": row["method"], "user_id": row["user_id"], "missing": row["no such field"]}

    with pytest.raises(RecgraphError, match="another protocol"):
        ResultsLog(path, {"dataset": "other"}, compact=compact)
    (tmp_path / "bad.jsonl").write_bytes(b'{"method": "m", "user_id": "\xff"}\n')
    with pytest.raises(RecgraphError, match="line 1: not valid JSON"):
        ResultsLog(tmp_path / "bad.jsonl", PROTOCOL)
