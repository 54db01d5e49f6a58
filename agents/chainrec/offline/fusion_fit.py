"""Learned fusion weights: CandidateRank's fallback (agents/chainrec/online/fusion.py) weighs each
tool's evidence with a named weight; here the weights are fitted on the training tasks' recorded tool
answers, before the planner learns which tools to call.

- Each training row's tool answers become signals over its candidates (the fusion's own rank
  normalisation and confidences: `fuse` with unit weights), once per row.
- The fused ranking orders candidates by Σ_t w_t·confidence_t·signal_t(c) (the fusion's division by
  Σ w·confidence is the same for every candidate of a task, so it never changes the order): a
  linear ranker over the tools' evidence. The weights are fitted as a conditional logit, the
  target's softmax likelihood among its task's candidates with an `L2` penalty, w ≥ 0 (L-BFGS-B from
  the context's weights: convex, so deterministic). A smooth listwise loss rather than AvgHR itself:
  a greedy search on the step-shaped AvgHR of 240 tasks chased single tasks (ChainRec's library,
  ml-100k: +0.026 AvgHR on the training tasks, −0.06 on the held-out ones).
- Mode "auto" keeps the learned weights only when they generalise: per training task, the AvgHR of
  weights fitted on the other `FOLDS` − 1 folds is paired with the context weights' best tool set
  (every tool, or one alone), and the mean gain must be at least `keep_z` standard errors above 0
  (`TrainConfig.fusion_keep_z`, default 2). On ml-100k's 240 training tasks (classic, 10
  candidates) the router's fit passes (+0.029 ± 0.013) and ChainRec's does not (+0.013 ± 0.009).
  "learned" always keeps the fit; "context" never fits.
- Kept weights re-fuse every row's recorded tool-set rankings and re-score its chains, so SFT, DPO
  and the held-out table all see the rankings CandidateRank will produce with them; the checkpoint
  records the weights (config.json `fusion`) and the learned planner's CandidateRank ranks with them.

Only rows whose CandidateRank was the fusion (the heuristic backend) are fitted; with an LLM the
recorded rankings are the model's, which no weight changes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.chainrec.offline.reward import CUTOFFS, avg_hr
from agents.chainrec.offline.rollout import rescored
from agents.chainrec.online.fusion import fuse, fusion_weights
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode
from state.chainrec.context import ChainRecContext
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import Environment

FIT_VERSION = 2
"""Keyed into every checkpoint: bumped when the fit changes (1 was a greedy grid on AvgHR)."""
MODES = ("auto", "learned", "context")
"""`TrainConfig.fusion` values."""
L2 = 1.0
"""The fit's L2 penalty on the weights (in units of the summed log-likelihood of the tasks)."""
DECIMALS = 3
"""Learned weights are rounded to this many decimals (the rows are re-fused with the rounded ones,
which CandidateRank then uses)."""
FOLDS = 5
"""Cross-validation folds of "auto"."""


@dataclass
class Signals:
    """The training rows' tool answers as fusion inputs (rows × tools × candidates)."""

    tools: list[str]
    """Every tool any row ran, in catalog order (the rows' `tools`)."""
    signal: np.ndarray
    """[row, tool, candidate]: the tool's rank-normalised signal (0 where the row has none)."""
    confidence: np.ndarray
    """[row, tool]: the entry's confidence (0: the row did not run the tool, or it said nothing)."""
    target: np.ndarray
    """[row]: the target's position among the row's candidates."""

    def vector(self, weights: Mapping[str, float]) -> np.ndarray:
        """`weights` as one entry per tool of `tools` (0 for a tool it does not name)."""
        return np.array([float(weights.get(tool, 0.0)) for tool in self.tools])

    def scores(self, weights: Mapping[str, float], rows: np.ndarray | None = None) -> np.ndarray:
        """[row, candidate] fused scores over `rows` (default all)."""
        picked = np.arange(len(self.target)) if rows is None else rows
        return self._fused(self.signal[picked], self.vector(weights)[None, :] * self.confidence[picked])

    def set_scores(self, row: int, weights: Mapping[str, float], sets: np.ndarray) -> np.ndarray:
        """[set, candidate] fused scores of one row for each tool set (`sets`: [set, tool] booleans)."""
        weight = (self.vector(weights) * self.confidence[row])[None, :] * sets
        return self._fused(np.broadcast_to(self.signal[row], (len(sets), *self.signal.shape[1:])), weight)

    @staticmethod
    def _fused(signal: np.ndarray, weight: np.ndarray) -> np.ndarray:
        """Σ_t weight·signal / Σ_t weight, summed tool by tool in catalog order as `fuse` sums
        (so the context's weights give the recorded rankings bit for bit); no weight: the sum (0)."""
        total = np.zeros(signal.shape[0::2])
        norm = np.zeros(signal.shape[0])
        for t in range(signal.shape[1]):
            total += weight[:, t, None] * signal[:, t, :]
            norm += weight[:, t]
        return np.where(norm[:, None] > 0, total / np.where(norm > 0, norm, 1.0)[:, None], total)

    def per_task(self, weights: Mapping[str, float], rows: np.ndarray | None = None) -> np.ndarray:
        """AvgHR@{1,3,5} of each row's fused ranking over `rows` (default all)."""
        picked = np.arange(len(self.target)) if rows is None else rows
        if len(picked) == 0:
            return np.zeros(0)
        order = np.argsort(-self.scores(weights, picked), axis=1, kind="stable")
        rank = np.argmax(order == self.target[picked][:, None], axis=1) + 1
        return np.array([sum(r <= k for k in CUTOFFS) / len(CUTOFFS) for r in rank])

    def avg_hr(self, weights: Mapping[str, float], rows: np.ndarray | None = None) -> float:
        """Mean AvgHR@{1,3,5} of the fused rankings over `rows` (default all; none: 0)."""
        hits = self.per_task(weights, rows)
        return float(hits.mean()) if len(hits) else 0.0


def row_signals(env: Environment, ctx: ChainRecContext, rows: Sequence[dict[str, Any]]) -> Signals:
    """The rows' tool answers as signals (`env`: the training world the rows were recorded in)."""
    tools = list(dict.fromkeys(tool for row in rows for tool in row["tools"]))
    width = len(rows[0]["task"]["candidates"])
    signal = np.zeros((len(rows), len(tools), width))
    confidence = np.zeros((len(rows), len(tools)))
    target = np.zeros(len(rows), dtype=np.int64)
    for r, row in enumerate(rows):
        task = row["task"]
        candidates = list(task["candidates"])
        if len(candidates) != width:
            raise ValueError(f"fusion fit: rows with {len(candidates)} and {width} candidates")
        memory = [row["tool_outputs"][t] for t in row["tools"] if t in row["tool_outputs"]]
        episode = Episode(EpisodeScope(env, task["user_id"], task["scenario"]), tuple(candidates), (), ctx)
        fused = fuse(env, ctx, fetch_items(episode, candidates), memory, dict.fromkeys(tools, 1.0))
        for tool, part in fused.parts.items():
            signal[r, tools.index(tool)] = part
            confidence[r, tools.index(tool)] = fused.weights[tool]
        target[r] = candidates.index(task["target"])
    return Signals(tools, signal, confidence, target)


def fit_weights(signals: Signals, start: Mapping[str, float], rows: np.ndarray) -> dict[str, float]:
    """The conditional-logit weights over `rows` (L-BFGS-B from `start`, w ≥ 0, `L2` penalty)."""
    from scipy.optimize import minimize
    from scipy.special import logsumexp

    evidence = signals.signal[rows] * signals.confidence[rows][:, :, None]  # task, tool, candidate
    target = signals.target[rows]
    picked = np.zeros((len(rows), evidence.shape[2]))
    picked[np.arange(len(rows)), target] = 1.0

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        logits = np.einsum("rtc,t->rc", evidence, w)
        norm = logsumexp(logits, axis=1)
        chance = np.exp(logits - norm[:, None])
        value = -float((logits[np.arange(len(rows)), target] - norm).sum()) + L2 * float(w @ w)
        return value, -np.einsum("rtc,rc->t", evidence, picked - chance) + 2 * L2 * w

    initial = signals.vector(start)
    if len(rows) == 0:
        return dict(zip(signals.tools, initial.tolist(), strict=True))
    found = minimize(loss, initial, jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * len(initial))
    return {tool: round(float(w), DECIMALS) for tool, w in zip(signals.tools, found.x, strict=True)}


def context_best(signals: Signals, weights: Mapping[str, float], rows: np.ndarray) -> dict[str, float]:
    """The context weights' best tool set over `rows`: every tool together, or one alone."""
    sets = [dict(weights)] + [{tool: weights.get(tool, 0.0)} for tool in signals.tools]
    usable = [w for w in sets if any(v > 0 for v in w.values())]
    return max(usable, key=lambda w: signals.avg_hr(w, rows))


def cross_validated(signals: Signals, start: Mapping[str, float], rows: np.ndarray) -> np.ndarray:
    """Per row of `rows` (in order), the AvgHR of weights fitted on the other `FOLDS` − 1 folds; with
    fewer than two rows nothing can be held out, so the `start` weights answer for the fit."""
    if len(rows) < 2:
        return signals.per_task(dict(start), np.asarray(rows))
    folds = np.array_split(np.asarray(rows), min(FOLDS, len(rows)))
    hits = []
    for k, fold in enumerate(folds):
        rest = np.concatenate([f for j, f in enumerate(folds) if j != k])
        hits.append(signals.per_task(fit_weights(signals, start, rest), fold))
    return np.concatenate(hits)


def generalises(
    signals: Signals, start: Mapping[str, float], rows: np.ndarray, keep_z: float, best: Mapping[str, float]
) -> dict[str, Any]:
    """The cross-validated fit against the context's best tool set over `rows` (`best`:
    `context_best`), paired per task: both means, the mean gain, its standard error, and whether
    the gain clears `keep_z` standard errors."""
    folds = cross_validated(signals, start, rows)
    baseline = signals.per_task(best, rows)
    gain = folds - baseline
    error = float(gain.std(ddof=1) / np.sqrt(len(gain))) if len(gain) > 1 else 0.0
    mean = float(gain.mean())
    return {
        "learned": round(float(folds.mean()), 4),
        "context_best_set": round(float(baseline.mean()), 4),
        "gain": round(mean, 4),
        "standard_error": round(error, 4),
        "kept": bool(mean > 0 and mean >= keep_z * error),
        "keep_z": keep_z,
    }


def refused(
    rows: Sequence[dict[str, Any]],
    signals: Signals,
    weights: Mapping[str, float],
    lam: float,
    cost_lam: float,
) -> list[dict[str, Any]]:
    """The rows with every recorded tool-set ranking fused again with `weights` and their chains
    re-scored (R(τ) with `lam` and `cost_lam`)."""
    out = []
    for r, row in enumerate(rows):
        candidates = list(row["task"]["candidates"])
        keys = list(row["rankings"])
        sets = np.zeros((len(keys), len(signals.tools)))
        for k, key in enumerate(keys):
            for i in key.split("."):
                sets[k, signals.tools.index(row["tools"][int(i)])] = 1.0
        orders = np.argsort(-signals.set_scores(r, weights, sets), axis=1, kind="stable")
        rankings = {}
        for key, order in zip(keys, orders, strict=True):
            ranking = [candidates[i] for i in order]
            rankings[key] = {"ranking": ranking, "avg_hr": avg_hr(ranking, row["task"]["target"])}
        out.append(rescored({**row, "rankings": rankings}, lam, cost_lam))
    return out


def learn_fusion(
    rows: Sequence[dict[str, Any]],
    train: Sequence[int],
    env: Environment,
    ctx: ChainRecContext,
    mode: str,
    lam: float,
    cost_lam: float,
    keep_z: float = 2.0,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, what was decided): with `mode` "learned" or "auto" and a kept fit, the rows re-fused
    with weights fitted on the `train` rows; otherwise `rows` unchanged. The record names the mode,
    both weight sets and the training AvgHR of each (and, fitted, the cross-validated figures)."""
    if mode not in MODES:
        raise ValueError(f"unknown fusion mode {mode!r}: {', '.join(MODES)}")
    start = {tool: w for tool, w in fusion_weights(ctx).items() if w > 0}
    record: dict[str, Any] = {"mode": mode, "used": "context", "context_weights": start}
    if mode == "context" or not rows:
        return list(rows), record
    signals = row_signals(env, ctx, rows)
    picked = np.asarray(train, dtype=np.int64)
    start = {tool: w for tool, w in start.items() if tool in signals.tools}
    record["context_weights"] = start
    learned = fit_weights(signals, start, picked)
    best = context_best(signals, start, picked)
    record.update(
        weights=learned,
        train_avg_hr={
            "context": round(signals.avg_hr(start, picked), 4),
            "context_best_set": round(signals.avg_hr(best, picked), 4),
            "learned": round(signals.avg_hr(learned, picked), 4),
        },
    )
    keep = mode == "learned"
    if mode == "auto":
        record["cross_validated"] = generalises(signals, start, picked, keep_z, best)
        keep = record["cross_validated"]["kept"]
    if not keep:
        return list(rows), record
    record["used"] = "learned"
    return refused(rows, signals, learned, lam, cost_lam), record


def describe(record: dict[str, Any]) -> str:
    """One line on the fusion a checkpoint ranks with (the CLI prints it)."""
    used = record.get("used", "context")
    if "train_avg_hr" not in record:
        return f"fusion: the context's weights ({record.get('why') or 'fusion mode ' + record['mode']})"
    weights = ", ".join(f"{tool} {w:g}" for tool, w in record["weights"].items())
    figures = record["train_avg_hr"]
    line = (
        f"fusion ({record['mode']}): {'learned' if used == 'learned' else 'context'} weights; training "
        f"AvgHR of every tool fused {figures['learned']} learned vs {figures['context']} context "
        f"(its best tool set {figures['context_best_set']})"
    )
    if "cross_validated" in record:
        folds = record["cross_validated"]
        verdict = "kept" if folds["kept"] else f"under {folds['keep_z']:g} standard errors"
        line += (
            f"; {FOLDS}-fold {folds['learned']} vs {folds['context_best_set']}, gain {folds['gain']:+} ± "
            f"{folds['standard_error']} ({verdict})"
        )
    return line + f". Learned: {weights}"
