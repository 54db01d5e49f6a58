"""A scenario with too few training tasks trains on the classic scenario's too (pipeline.supplemented)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agents.chainrec.offline import pipeline
from agents.chainrec.offline.trajectories import TrajectoryRun


def _rows(n: int, scenario: str) -> list[dict[str, Any]]:
    return [{"user_id": str(u), "task": {"scenario": scenario}} for u in range(n)]


def test_small_scenarios_add_classic_tasks_with_prefixed_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[str] = []

    def classic() -> TrajectoryRun:
        asked.append("classic")
        return TrajectoryRun(Path("classic.jsonl"), 3, 0, 0)

    monkeypatch.setattr(pipeline, "read_rows", lambda path: _rows(3, "classic"))
    own = _rows(2, "cold_item")
    rows = pipeline.supplemented(own, "cold_item", classic)
    assert [r["user_id"] for r in rows] == ["0", "1", "classic:0", "classic:1", "classic:2"]
    assert [r["task"]["scenario"] for r in rows] == ["cold_item"] * 2 + ["classic"] * 3
    assert asked == ["classic"]
    # Enough tasks, the classic scenario itself, or nothing to add: the rows as they are, nothing made.
    enough = _rows(pipeline.MIN_TRAIN_TASKS, "cold_item")
    assert pipeline.supplemented(enough, "cold_item", classic) is enough
    assert pipeline.supplemented(own, "classic", classic) is own
    assert pipeline.supplemented(own, "cold_item", None) is own
    assert asked == ["classic"]


def test_support_is_per_scenario_so_a_small_scenario_keeps_its_own_chains() -> None:
    from agents.chainrec.offline.policy_data import best_chain, chain_support

    def row(user: str, scenario: str, chains: dict[str, float]) -> dict[str, Any]:
        return {
            "user_id": user,
            "task": {"scenario": scenario},
            "tools": ["LongTermPreference", "ItemSemantic"],
            "rankings": {},
            "chains": [[code, code, value] for code, value in chains.items()],
        }

    classic = [row(u, "classic", {"0": 1.0, "1": 0.0}) for u in ("a", "b")]
    cold = row("classic:c", "cold_item", {"0": 0.0, "1": 0.9})
    support = chain_support([*classic, cold])
    assert support.means == {
        "classic:LongTermPreference": 1.0,
        "classic:ItemSemantic": 0.0,
        "cold_item:LongTermPreference": 0.0,
        "cold_item:ItemSemantic": 0.9,
    }
    assert best_chain(cold, support, 1.0) == ("1", 0.9)
    # Pooled over scenarios, classic's two tasks outvote the cold-item task's own evidence.
    pooled = chain_support([*classic, cold], per_scenario=False)
    assert pooled.means == pytest.approx({"LongTermPreference": 2 / 3, "ItemSemantic": 0.3})
    assert best_chain(cold, pooled, 1.0) == ("0", 0.0)
