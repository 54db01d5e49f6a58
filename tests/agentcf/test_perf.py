"""`bench perf --methods agentcf`: its `perf_prepare` hook trains the perf users' memories against
the same simulator before the timed ranking, so every timed user ranks with a trained user memory
and trained candidate memories (without the hook they would be the initial descriptions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recgraph.cli import main


def test_perf_ranks_agentcf_on_memories_its_perf_prepare_hook_trained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECGRAPH_HOME", str(tmp_path / "home"))
    args = ["bench", "perf", "--methods", "agentcf", "--users", "4", "--latency", "0.05"]
    assert main([*args, "--concurrency", "4", "--out", str(tmp_path / "out")]) == 0
    row = json.loads((tmp_path / "out" / "perf.json").read_text())["methods"]["agentcf"]
    training = row["training"]
    assert training["users"] == 4 and training["interactions"] == 4 * 3  # 3 latest each (default)
    assert training["this_run"]["llm_calls"] >= training["interactions"]  # at least a choice each
    assert row["details_mean_per_user"] == {"trained_user": 1.0, "trained_candidates": 1.0}
