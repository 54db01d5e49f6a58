"""The routing-signal diagnostic and the contextual expert (what the task facts predict), on rows
where the history length decides which tool hits: hand-computed outcomes."""

from __future__ import annotations

from typing import Any

import pytest

from agents.chainrec.offline.contextual_expert import contextual_rule
from agents.chainrec.offline.policy_data import chain_support
from agents.chainrec.offline.routing_signal import describe, evidence_vector, routing_signal
from agents.chainrec.offline.train_config import TrainConfig, chosen_expert, expert_rule

LAM = 0.003
TOOLS = ["ItemProfile", "ItemSemantic"]


def _facts(history: int) -> dict[str, Any]:
    return {
        "history_items": history,
        "days_since_last": 0.0,
        "has_timestamps": False,
        "candidates_log_pop_mean": 1.0,
        "candidates_log_pop_std": 0.5,
        "candidates_log_pop_max": 2.0,
        "candidates_cold_fraction": 0.1,
        "domain": {"categories": True},
        "scenario": "classic",
    }


def _row(user: int) -> dict[str, Any]:
    """Short histories: ItemProfile ("0") hits, ItemSemantic ("1") misses; long ones the other way;
    both together ("0.1") always score 0.7."""
    short = user % 2 == 0
    quality = {"0": 1.0 if short else 0.0, "1": 0.0 if short else 1.0, "0.1": 0.7}
    return {
        "user_id": str(user),
        "tools": TOOLS,
        "facts": _facts(3 if short else 300),
        "rankings": {code: {"avg_hr": value} for code, value in quality.items()},
        "chains": [[code, code, value - LAM * (code.count(".") + 1)] for code, value in quality.items()],
    }


ROWS = [_row(u) for u in range(40)]


def test_routing_signal_finds_the_set_the_facts_predict() -> None:
    signal = routing_signal(ROWS)
    assert signal is not None and (signal["tasks"], signal["tool_sets"], signal["folds"]) == (40, 3, 5)
    # Each fold's best fixed set is both tools (0.7: a single tool hits for at most 20 of 32 users).
    assert signal["best_fixed_avg_hr"] == pytest.approx(0.7)
    # The history length tells which single tool hits: the predicted set is right on every task.
    assert signal["predicted_avg_hr"] == pytest.approx(1.0)
    assert signal["oracle_avg_hr"] == pytest.approx(1.0)
    assert routing_signal(ROWS[:3]) is None  # fewer tasks than folds


def test_contextual_expert_follows_the_facts_where_support_follows_the_population() -> None:
    train = list(range(32))
    supported = expert_rule(ROWS, train, TrainConfig(expert="supported"))
    # Both tools together (0.694 reward) is within 0.34 of a hit (0.997) and best on average.
    assert {supported(row) for row in ROWS} == {"0.1"}
    contextual = contextual_rule(ROWS, train, chain_support([ROWS[n] for n in train]), 0.34, 0)
    assert [contextual(row) for row in ROWS[:4]] == ["0", "1", "0", "1"]
    assert [contextual(row) for row in ROWS[32:36]] == ["0", "1", "0", "1"]  # held-out rows too


def test_auto_picks_contextual_only_when_the_facts_beat_the_best_fixed_set() -> None:
    auto = TrainConfig()
    assert auto.expert == "auto"
    assert chosen_expert(auto, {"predicted_avg_hr": 0.78, "best_fixed_avg_hr": 0.76}) == "contextual"
    assert chosen_expert(auto, {"predicted_avg_hr": 0.76, "best_fixed_avg_hr": 0.76}) == "supported"
    assert chosen_expert(auto, None) == "supported"
    assert chosen_expert(TrainConfig(expert="hindsight"), None) == "hindsight"
    assert expert_rule(ROWS, list(range(32)), auto)(ROWS[1]) == "1"
    with pytest.raises(ValueError, match="unknown expert 'best': hindsight, supported, contextual, auto"):
        expert_rule(ROWS, [0], TrainConfig(expert="best"))


def _answer(margin: float) -> dict[str, Any]:
    """A tool answer over candidates c0..c3 whose best score leads the rest by `margin`."""
    scores = [0.2 + margin, 0.2, 0.1, 0.0]
    return {"confidence": 0.5, "items": [{"item_id": f"c{n}", "score": s} for n, s in enumerate(scores)]}


def _evidence_row(user: int) -> dict[str, Any]:
    """Every task has the same facts; the tool that hits is the one whose answer is sure of itself
    (a 0.6 margin against 0.01)."""
    row = _row(user)
    short = user % 2 == 0
    row["facts"] = _facts(30)
    row["task"] = {"candidates": ["c0", "c1", "c2", "c3"], "target": "c0"}
    row["tool_outputs"] = {
        "ItemProfile": _answer(0.6 if short else 0.01),
        "ItemSemantic": _answer(0.01 if short else 0.6),
    }
    return row


def test_hindsight_evidence_routes_on_what_the_answers_show() -> None:
    rows = [_evidence_row(u) for u in range(40)]
    signal = routing_signal(rows)
    assert signal is not None
    # The facts are the same for every task: the prediction falls back to the best fixed set.
    assert signal["predicted_avg_hr"] == pytest.approx(0.7)
    # Each tool's margin shows which one hits: in hindsight every task gets its hitting tool.
    assert signal["evidence_predicted_avg_hr"] == pytest.approx(1.0)
    assert describe(signal).endswith("oracle 1.0); with every tool's answer in hindsight: 1.0")
    assert "evidence_predicted_avg_hr" not in routing_signal(ROWS)  # rows without tool answers


def test_evidence_vector_reads_margins_spreads_confidence_and_rank_agreement() -> None:
    row = _evidence_row(0)
    vector = evidence_vector(row)
    # Per tool (margin, std, confidence), then the one pair's rank correlation (same order: 1).
    assert vector[[0, 2, 3, 5, 6]] == pytest.approx([0.6, 0.5, 0.01, 0.5, 1.0])
    assert len(vector) == 7
    row["tool_outputs"].pop("ItemSemantic")  # a tool that did not answer: zeros, no agreement
    assert evidence_vector(row)[3:] == pytest.approx([0.0, 0.0, 0.0, 0.0])
