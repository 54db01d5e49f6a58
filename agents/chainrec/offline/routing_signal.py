"""How much per-task routing signal the planner's task facts hold: a diagnostic beside the held-out
planner comparison (evaluation.json `routing_signal`).

A planner beats the best fixed chain only if something it sees predicts which evidence will hit.
Over the tool sets ranked on every training task, k-fold over the tasks: a ridge model per fold
predicts each set's AvgHR@{1,3,5} from the task facts (the state before the first decision:
history length, recency, the candidates' popularity and coldness, domain flags, scenario), and
each held-out task gets the set with the highest prediction. Its mean AvgHR is compared with the
fold's best fixed set (highest mean on the fold's training part) and with each task's best set
(the oracle). Predicted ≈ best fixed means the facts carry no usable routing signal on this data
and backend, whatever the policy's capacity; the oracle is then mostly luck among near-equal sets.

`hindsight_evidence` repeats the fit with every tool's recorded answer added to the facts (per
tool: its top score's margin, its scores' spread and its confidence; per pair of tools: the rank
agreement of their scores). No planner sees all of that before choosing: it asks whether the
tools' answers, read in hindsight by the same kind of model, tell which set will hit when the
facts do not. Predicted ≈ best fixed there too means the evidence carries no routing signal a
linear model finds either (a richer model may; with a few dozen tasks, more features can also
predict worse than the facts alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np

from agents.chainrec.offline.policy_data import set_name
from agents.chainrec.online.features import TASK_FEATURES, state_vector

FOLDS = 5
"""Folds over the training tasks."""
RIDGE_ALPHA = 10.0
"""The ridge penalty (features standardised first)."""


def facts_vector(facts: dict[str, Any]) -> np.ndarray:
    """The task facts part of the state vector (no used-tool flags, no memory embedding)."""
    return state_vector(facts, [], 1, np.zeros(0, dtype=np.float32), tools=())


def evidence_vector(row: dict[str, Any]) -> np.ndarray:
    """The row's recorded tool answers as numbers, over its catalog's `tools` in order: per tool the
    margin of its best candidate score over the second, the scores' standard deviation and its
    confidence (zeros for a tool that did not answer), then per pair of tools the Pearson
    correlation of their candidate ranks (0 when either ranks every candidate alike)."""
    candidates = row["task"]["candidates"]
    outputs = row.get("tool_outputs") or {}
    scores, own = [], []
    for tool in row["tools"]:
        answer = outputs.get(tool) or {}
        by_item = {item["item_id"]: float(item.get("score") or 0.0) for item in answer.get("items", [])}
        vector = np.array([by_item.get(item, 0.0) for item in candidates], dtype=np.float64)
        top = np.sort(vector)[::-1]
        margin = float(top[0] - top[1]) if len(top) > 1 else 0.0
        own += [margin, float(vector.std()), float(answer.get("confidence") or 0.0)]
        scores.append(vector.argsort().argsort().astype(np.float64) if vector.std() > 0 else None)
    agreement = [
        float(np.corrcoef(a, b)[0, 1]) if a is not None and b is not None else 0.0
        for a, b in combinations(scores, 2)
    ]
    return np.array(own + agreement, dtype=np.float64)


def ridge() -> Any:
    """The model of every tool set's AvgHR from the task facts (standardised, then ridge)."""
    from sklearn.linear_model import Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), Ridge(alpha=RIDGE_ALPHA))


def set_table(rows: Sequence[dict[str, Any]]) -> tuple[list[str], np.ndarray]:
    """(tool set names, AvgHR per row and set) over the sets every row ranked."""
    per_row = [{set_name(row, key): float(r["avg_hr"]) for key, r in row["rankings"].items()} for row in rows]
    common = sorted(set.intersection(*(set(named) for named in per_row))) if per_row else []
    return common, np.array([[named[name] for name in common] for named in per_row], dtype=np.float64)


@dataclass(frozen=True)
class CrossFit:
    """The k-fold fit over a list of training rows (`cross_fit`): what the routing signal summarises
    and the contextual expert's predictions for those rows."""

    names: list[str]
    """The tool sets ranked on every row."""
    quality: np.ndarray
    """AvgHR per row and set."""
    features: np.ndarray
    """The task facts per row (`facts_vector`)."""
    predicted: np.ndarray
    """Each row's predicted AvgHR per set, from the model fitted on the other folds."""
    fixed: np.ndarray
    """Each row's AvgHR under its fold's best fixed set (the highest mean on the other folds)."""
    folds: int
    """How many folds."""
    seed: int
    """Seeds the fold split (a refit over other features reuses the same folds)."""

    def chosen_avg_hr(self, predicted: np.ndarray) -> float:
        """Mean AvgHR of each row's predicted-best set under `predicted` (row × set)."""
        return round(float(self.quality[np.arange(len(self.quality)), predicted.argmax(axis=1)].mean()), 4)

    def signal(self) -> dict[str, Any]:
        """The diagnostic: predicted-best set against the best fixed set and the oracle."""
        return {
            "tasks": len(self.quality),
            "tool_sets": len(self.names),
            "folds": self.folds,
            "features": list(TASK_FEATURES),
            "best_fixed_avg_hr": round(float(self.fixed.mean()), 4),
            "predicted_avg_hr": self.chosen_avg_hr(self.predicted),
            "oracle_avg_hr": round(float(self.quality.max(axis=1).mean()), 4),
        }


def _fold_predictions(
    quality: np.ndarray, features: np.ndarray, folds: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(each row's predicted AvgHR per set from the ridge fitted on the other folds, each row's
    AvgHR under its fold's best fixed set)."""
    from sklearn.model_selection import KFold

    predicted = np.empty_like(quality)
    fixed = np.empty(len(quality))
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(features):
        fixed[test] = quality[test, int(np.argmax(quality[train].mean(axis=0)))]
        predicted[test] = ridge().fit(features[train], quality[train]).predict(features[test])
    return predicted, fixed


def cross_fit(rows: Sequence[dict[str, Any]], folds: int = FOLDS, seed: int = 0) -> CrossFit | None:
    """The k-fold ridge fit over `rows` (trajectory rows) from the task facts, or None with fewer rows
    than folds or no tool set ranked on every row."""
    names, quality = set_table(rows)
    if len(rows) < folds or not names:
        return None
    features = np.stack([facts_vector(row["facts"]) for row in rows])
    predicted, fixed = _fold_predictions(quality, features, folds, seed)
    return CrossFit(names, quality, features, predicted, fixed, folds, seed)


def hindsight_evidence(rows: Sequence[dict[str, Any]], fit: CrossFit) -> float | None:
    """The mean AvgHR of the sets a refit over `fit`'s folds picks from the facts and every tool's
    recorded answer (`evidence_vector`), or None when the rows hold no tool answers (`fit`: the
    rows' `cross_fit`)."""
    if not all(row.get("tool_outputs") and row.get("task") for row in rows):
        return None
    features = np.hstack([fit.features, np.stack([evidence_vector(row) for row in rows])])
    predicted, _ = _fold_predictions(fit.quality, features, fit.folds, fit.seed)
    return fit.chosen_avg_hr(predicted)


def signal_of(rows: Sequence[dict[str, Any]], fit: CrossFit) -> dict[str, Any]:
    """`fit.signal()`, with "evidence_predicted_avg_hr" (`hindsight_evidence`) when the rows record
    tool answers."""
    bound = hindsight_evidence(rows, fit)
    return fit.signal() if bound is None else {**fit.signal(), "evidence_predicted_avg_hr": bound}


def routing_signal(
    rows: Sequence[dict[str, Any]], folds: int = FOLDS, seed: int = 0
) -> dict[str, Any] | None:
    """The diagnostic over `rows` (trajectory rows), or None with fewer tasks than folds or no tool
    set ranked on every task (`signal_of`)."""
    fit = cross_fit(rows, folds, seed)
    return signal_of(rows, fit) if fit else None


def describe(signal: dict[str, Any] | None) -> str:
    """One line for the CLI ("" without a diagnostic)."""
    if not signal:
        return ""
    return (
        f"routing signal ({signal['folds']}-fold over {signal['tasks']} training tasks, "
        f"{signal['tool_sets']} tool sets; task facts → the set with the best predicted AvgHR): "
        f"{signal['predicted_avg_hr']} vs "
        f"{signal['best_fixed_avg_hr']} for the best fixed set (oracle {signal['oracle_avg_hr']})"
        + (
            f"; with every tool's answer in hindsight: {signal['evidence_predicted_avg_hr']}"
            if "evidence_predicted_avg_hr" in signal
            else ""
        )
    )
