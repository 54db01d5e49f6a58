"""Two processes, two homes, one PostgreSQL memory: one runs MemRec's Stage W warm-up, the other
ranks on its result without asking LM_Mem again, and both rank identically."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from world.database import DATABASE_URL_ENV

REPO = Path(__file__).resolve().parents[2]


def _bench(machine: Path, dataset: Path, url: str) -> dict:
    """`recgraph bench --methods memrec` as a process on `machine` (its own working folder and
    RECGRAPH_HOME; nothing shared on disk with the other) with the same relative --out."""
    home = machine / "home"
    home.mkdir(parents=True)
    models = Path(os.environ["RECGRAPH_HOME"]) / "models"
    if models.is_dir():  # the exported encoder only (saves a 6 s export), no memory data
        (home / "models").symlink_to(models)
    env = {**os.environ, "RECGRAPH_HOME": str(home), DATABASE_URL_ENV: url, "PYTHONPATH": str(REPO)}
    args = ["bench", "--methods", "memrec", "--dataset", str(dataset), "--users", "12", "--candidates", "5"]
    done = subprocess.run(
        [sys.executable, "-m", "recgraph.cli", *args, "--out", "runs/shared"],
        cwd=machine, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = machine / "runs" / "shared"
    rankings = {}
    for line in (out / "results.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record.get("method") == "memrec":
            rankings[record["user_id"]] = record["ranking"]
    return {"rankings": rankings, "row": json.loads((out / "metrics.json").read_text())["methods"]["memrec"]}


def test_the_second_process_ranks_on_the_first_ones_warm_up(tmp_path: Path, postgres_url: str) -> None:
    from recgraph.cli import main

    dataset = tmp_path / "synthetic"
    synth = ["datasets", "synth", "--users", "30", "--items", "40", "--interactions", "300"]
    assert main([*synth, "--out", str(dataset)]) == 0
    first = _bench(tmp_path / "machine-a", dataset, postgres_url)
    second = _bench(tmp_path / "machine-b", dataset, postgres_url)
    jobs = first["row"]["stage_w"]["jobs"]
    assert jobs > 0 and "stage_w_applied_elsewhere" not in first["row"]
    assert second["row"]["stage_w_applied_elsewhere"] == jobs  # every warm-up job found applied
    assert second["row"]["stage_w"]["jobs"] == 0  # and none proposed again
    assert second["rankings"] == first["rankings"]
    for metric in ("hit@1", "ndcg@5", "mrr"):
        assert second["row"][metric] == first["row"][metric]
