"""`recgraph bench` with AMEM4Rec's pool in PostgreSQL ranks exactly as with the embedded pool."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from world.database import DATABASE_URL_ENV


def _rankings(out: Path) -> dict[str, list[str]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return {row["user_id"]: row["ranking"] for row in rows if row.get("method") == "amem4rec"}


def test_a_bench_run_on_the_database_pool_ranks_as_on_the_embedded_one(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recgraph.cli import main

    dataset = tmp_path / "synthetic"
    synth = ["datasets", "synth", "--users", "20", "--items", "30", "--interactions", "160"]
    assert main([*synth, "--out", str(dataset)]) == 0
    bench = ["bench", "--methods", "amem4rec", "--dataset", str(dataset), "--users", "8", "--candidates", "5"]
    assert main([*bench, "--out", str(tmp_path / "embedded")]) == 0
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    assert main([*bench, "--workers", "2", "--out", str(tmp_path / "database")]) == 0
    assert not list((tmp_path / "database").rglob("pool.sqlite"))  # the pool is in the database
    embedded, database = _rankings(tmp_path / "embedded"), _rankings(tmp_path / "database")
    assert len(embedded) == 8 and database == embedded
