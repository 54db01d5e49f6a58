"""How the ChainRec planner is trained (`TrainConfig`, stored in the checkpoint) and what it learns
from under that config: the SFT target chain of a task (`expert_rule`) and the DPO pairs of a task
(`task_pairs`); policy_data.py holds the rules themselves."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents.chainrec.offline.policy_data import (
    ChainSupport,
    best_chain,
    chain_support,
    expert_pairs,
    gap_pairs,
    preference_pairs,
)
from agents.chainrec.offline.routing_signal import CrossFit, cross_fit


@dataclass(frozen=True)
class TrainConfig:
    """How the policy is trained (stored in the checkpoint's config.json)."""

    hidden: int = 64
    """Hidden units of the MLP."""
    sft_epochs: int = 300
    """Full-batch SFT epochs."""
    sft_lr: float = 1e-3
    """Adam learning rate of SFT."""
    dpo_epochs: int = 200
    """Full-batch DPO epochs."""
    dpo_lr: float = 1e-3
    """Adam learning rate of DPO."""
    beta: float = 0.1
    """DPO's β."""
    pairs_per_task: int = 32
    """Preference pairs sampled per task for DPO."""
    pair_mode: str = "expert"
    """"best": the task's hindsight-best chain against others; "any": any preferred-vs-rejected
    chain pair; "gap": pairs whose AvgHR differs by at least `min_gap`; "expert": the task's SFT
    target (`expert`) against chains whose AvgHR is at least `min_gap` lower. "gap" and "expert"
    pairs are weighted by their reward gap."""
    min_gap: float = 0.3
    """Modes "gap" / "expert": the least AvgHR difference of a pair (a 1/3 step with heuristic tools)."""
    supported_pairs: bool = True
    """Mode "gap": keep a pair only when the training tasks' mean rewards order it the same way."""
    dpo_sft_weight: float = 1.0
    """Weight of the SFT loss on the expert decisions added to DPO's (0: plain DPO)."""
    expert: str = "auto"
    """SFT's target chain per task: "hindsight" (the best reward; ties: fewer steps), "supported"
    (among chains within `expert_epsilon` of the best, the best mean training reward), "contextual"
    (among the same, the best reward its task facts predict: contextual_expert.py), or "auto":
    contextual when the training tasks' cross-validated routing signal (routing_signal.py) shows
    the facts choosing better sets than the best fixed one, else supported (`chosen_expert`)."""
    expert_epsilon: float = 0.34
    """Experts "supported" and "contextual": how far below the task's best reward a chain may be and
    still be chosen."""
    support_by: str = "tool_set"
    """What the supported expert and supported pairs average over the training tasks: "tool_set" (every
    order of a set together) or "chain" (each ordered chain: before this field existed; with sampled
    chains a long chain's mean is over a few tasks, so the expert became a lucky long chain)."""
    support_per_scenario: bool = True
    """Support is averaged per scenario when the rows span several (a small scenario trained with
    the classic scenario's tasks: pipeline.supplemented)."""
    fusion: str = "auto"
    """CandidateRank's fusion weights (fusion_fit.py): "context" (the run's named weights), "learned"
    (fitted on the training tasks' tool answers, then every row re-fused with them) or "auto" (learned
    when their cross-validated gain over the context weights' best tool set clears `fusion_keep_z`
    standard errors)."""
    fusion_keep_z: float = 2.0
    """Fusion "auto": how many standard errors the cross-validated gain must clear."""
    weight_decay: float = 1e-4
    """Adam weight decay (both stages)."""
    heldout_fraction: float = 0.2
    """Share of tasks held out for the curves and the evaluation."""
    eval_every: int = 10
    """Epochs between held-out evaluations."""
    seed: int = 0
    """Seeds the split, the initial weights and the pair sample."""
    state: str = "memory"
    """The planner's state (features.STATES): "memory" = (u, I_cand, M_t) as in Eq. 2, "scenario" =
    the scenario-aware ablation (task facts and the scenario tag). Keyed into the checkpoint."""

    def as_dict(self) -> dict[str, Any]:
        """The config as stored."""
        return asdict(self)


EXPERTS = ("hindsight", "supported", "contextual", "auto")
"""The SFT target rules `TrainConfig.expert` names."""


def chosen_expert(config: TrainConfig, signal: dict[str, Any] | None) -> str:
    """The rule `config.expert` resolves to given the training tasks' routing signal ("auto":
    contextual when its predicted sets beat the best fixed set, else supported)."""
    if config.expert != "auto":
        return config.expert
    return (
        "contextual" if signal and signal["predicted_avg_hr"] > signal["best_fixed_avg_hr"] else "supported"
    )


def expert_rule(
    rows: Sequence[dict[str, Any]],
    train: Sequence[int],
    config: TrainConfig,
    fit: CrossFit | None = None,
    support: ChainSupport | None = None,
) -> Callable[[dict[str, Any]], str]:
    """row -> its SFT target chain code (`config.expert`; the support and, for "contextual" and
    "auto", the training rows' `cross_fit` are measured on the training rows unless given)."""
    if config.expert == "hindsight":
        return lambda row: best_chain(row)[0]
    if config.expert not in EXPERTS:
        raise ValueError(f"unknown expert {config.expert!r}: {', '.join(EXPERTS)}")
    chosen = [rows[n] for n in train]
    if support is None:
        support = chain_support(chosen, config.support_by, config.support_per_scenario)
    if config.expert in ("contextual", "auto") and fit is None:
        fit = cross_fit(chosen, seed=config.seed)
    if chosen_expert(config, fit.signal() if fit else None) == "contextual":
        from agents.chainrec.offline.contextual_expert import contextual_rule

        return contextual_rule(rows, train, support, config.expert_epsilon, config.seed, fit)
    return lambda row: best_chain(row, support, config.expert_epsilon)[0]


def task_pairs(
    row: dict[str, Any],
    config: TrainConfig,
    rng: np.random.Generator,
    support: ChainSupport,
    expert: Callable[[dict[str, Any]], str],
) -> list[tuple[str, str, float]]:
    """(chosen, rejected, weight) pairs of one task under `config.pair_mode` (`support`: mean
    reward per chain over the training tasks; `expert`: the SFT target rule)."""
    if config.pair_mode == "expert":
        return expert_pairs(row, expert(row), config.pairs_per_task, rng, config.min_gap)
    if config.pair_mode == "gap":
        agreed = support if config.supported_pairs else None
        return gap_pairs(row, config.pairs_per_task, rng, config.min_gap, agreed)
    return [(c, r, 1.0) for c, r in preference_pairs(row, config.pairs_per_task, rng, config.pair_mode)]
