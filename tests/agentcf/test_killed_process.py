"""AgentCF's training survives a real SIGKILL: a `recgraph bench` process killed while it trains
leaves a memory file of whole steps, and the rerun finishes from there to the memories an
uninterrupted run trains (the in-process resume test in test_training.py raises instead)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

RUN = [sys.executable, "-m", "recgraph.cli"]
USERS = 150


def bench(home: Path, out: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment of an AgentCF bench run with its own RECGRAPH_HOME."""
    args = [*RUN, "bench", "--methods", "agentcf", "--dataset", "ml-100k", "--users", str(USERS)]
    return [*args, "--candidates", "10", "--seed", "0", "--out", str(out)], {
        **os.environ, "RECGRAPH_HOME": str(home), "HF_HUB_OFFLINE": "1",
    }  # fmt: skip


def memory_file(home: Path) -> Path | None:
    """The training checkpoint under `home` (None before the first step is saved)."""
    found = sorted(home.glob("ml-100k*/agentcf/memories-*.json"))
    return found[0] if found else None


def memories(path: Path) -> tuple[int, list]:
    """(steps_done, the memories' content) of a checkpoint."""
    saved = json.loads(path.read_text(encoding="utf-8"))
    return saved["steps_done"], [saved["users"], saved["user_log"], saved["items"]]


def test_a_killed_training_process_resumes_to_the_same_memories(tmp_path: Path) -> None:
    killed_home, clean_home = tmp_path / "killed-home", tmp_path / "clean-home"
    command, env = bench(killed_home, tmp_path / "killed")
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline, path = time.time() + 300, None
    while time.time() < deadline and process.poll() is None:
        path = memory_file(killed_home)
        if path is not None and memories(path)[0] >= 1:
            break
        time.sleep(0.05)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert path is not None, "the run must have saved a step before the kill"
    steps_at_kill, _ = memories(path)
    command, env = bench(killed_home, tmp_path / "killed")
    subprocess.run(command, env=env, capture_output=True, check=True)
    steps_total, resumed = memories(path)
    assert 1 <= steps_at_kill < steps_total, "the kill must land mid-training"

    command, env = bench(clean_home, tmp_path / "clean")
    subprocess.run(command, env=env, capture_output=True, check=True)
    clean_path = memory_file(clean_home)
    assert clean_path is not None and clean_path.name == path.name  # same configuration key
    assert memories(clean_path) == (steps_total, resumed)
    summary = json.loads((tmp_path / "killed" / "metrics.json").read_text())
    assert summary["methods"]["agentcf"]  # the resumed run ranked and reported
