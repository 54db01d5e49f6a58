"""The contextual expert: a task's SFT target chain chosen by what its task facts predict, so the
policy is taught choices the state can explain.

The supported expert (policy_data.py) picks, among a task's near-best chains, the tool set with the
best *population* mean: every task then gets the same set unless it misses, and the policy can only
learn the best fixed chain. The contextual expert replaces the population mean with a per-task
prediction: a ridge model over the task facts (routing_signal.py's features) predicts each tool
set's AvgHR@{1,3,5}; the expert is the near-best chain (within `epsilon` of the task's best reward)
with the highest predicted reward (predicted AvgHR minus the chain's own step and token penalty).
Training tasks are cross-fitted (each task's predictions come from a model fitted on the other
folds, so its own outcome never picks its target); any other task (held out) is predicted by a model
fitted on all training tasks. Sets not ranked on every training task fall back to the population
support, then to the usual order (fewer steps, lower code).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.chainrec.offline.policy_data import ChainSupport, chain_key, set_name
from agents.chainrec.offline.routing_signal import CrossFit, cross_fit, facts_vector, ridge


def predicted_quality(
    rows: Sequence[dict[str, Any]], train: Sequence[int], seed: int, fit: CrossFit | None = None
) -> tuple[list[str], dict[str, np.ndarray], Callable[[dict[str, Any]], np.ndarray]]:
    """(set names, cross-fitted predictions by training row's user id, a predictor for any other
    row); `fit`: the training rows' `cross_fit` when the caller has it already."""
    chosen = [rows[n] for n in train]
    fit = fit or cross_fit(chosen, seed=seed)
    if fit is None:
        return [], {}, lambda row: np.zeros(0)
    full = ridge().fit(fit.features, fit.quality)
    by_user = {row["user_id"]: fit.predicted[i] for i, row in enumerate(chosen)}
    return fit.names, by_user, lambda row: full.predict(facts_vector(row["facts"])[None, :])[0]


def contextual_rule(
    rows: Sequence[dict[str, Any]],
    train: Sequence[int],
    support: ChainSupport,
    epsilon: float,
    seed: int,
    fit: CrossFit | None = None,
) -> Callable[[dict[str, Any]], str]:
    """row -> its contextual expert chain code (see the module docstring; `fit` as in
    `predicted_quality`)."""
    names, by_user, predict = predicted_quality(rows, train, seed, fit)
    column = {name: i for i, name in enumerate(names)}

    def expert(row: dict[str, Any]) -> str:
        predicted = by_user.get(row["user_id"])
        if predicted is None:
            predicted = predict(row)
        quality = {key: ranking["avg_hr"] for key, ranking in row["rankings"].items()}
        best = max(float(value) for _, _, value in row["chains"])
        near = [c for c in row["chains"] if float(c[2]) >= best - epsilon - 1e-9]

        def score(chain: list[Any]) -> tuple[float, float, tuple[float, int, str]]:
            code, key, value = chain
            at = column.get(set_name(row, code))
            penalty = float(quality.get(key, value)) - float(value)  # the chain's step and token cost
            guess = float(predicted[at]) - penalty if at is not None and len(predicted) else -math.inf
            return (-guess, -support.of(row, code), chain_key(code, float(value)))

        return min(near, key=score)[0]

    return expert
