"""ChainRec offline stage 2: train π_θ(a | s) on CPU — SFT on an expert chain per task (Eq. 10), then
DPO against the SFT policy (Eq. 11) — with fixed seeds, so the same rows give the same weights. The
actions and used-tool features come from an `ActionSpace` (a tool catalog; ChainRec's by default);
the expert and the pairs from train_config.py.

- SFT: cross-entropy of the expert action at every decision of each training task's expert chain
  (by default the supported one: the chain the training tasks back among the task's near-best),
  over the feasible actions only (the mask of agents/chainrec/online/mask.py).
- DPO: log π(τ) = Σ_t log π(a_t | s_t) over a trajectory's decisions; for (chosen, rejected) pairs
  of the same task, loss = −log σ(β[(log π(τ_c) − log π_ref(τ_c)) − (log π(τ_r) − log π_ref(τ_r))]),
  π_ref the frozen SFT policy (`dpo_loss`, each pair weighted by its reward gap), plus
  `dpo_sft_weight` × the SFT loss on the expert decisions (as in RPO), which keeps DPO from trading
  the expert's actions for noise when the preferences carry little signal.
- A seeded share of the tasks is held out: curves record the loss, the expert-action accuracy on
  held-out tasks, the held-out reward of greedy roll-outs and (DPO) the held-out chosen-minus-
  rejected log-probability margin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.chainrec.offline.policy_data import StateTable, chain_support, warm_embeddings
from agents.chainrec.offline.rollout import greedy_chain, reward_of
from agents.chainrec.offline.routing_signal import cross_fit, signal_of
from agents.chainrec.offline.train_config import TrainConfig, chosen_expert, expert_rule, task_pairs
from agents.chainrec.online.features import feature_dim
from agents.chainrec.online.policy import ActionSpace, PolicyWeights
from world.embeddings import release_encoder


class Policy(nn.Module):
    """logits = W2 relu(W1 x + b1) + b2 (the numpy twin is `PolicyWeights`)."""

    def __init__(self, features: int, hidden: int, actions: int) -> None:
        """An MLP from `features` inputs to one logit per action."""
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, actions))

    def log_probs(self, x: torch.Tensor, feasible: torch.Tensor) -> torch.Tensor:
        """log π(a | s) with infeasible actions at -inf."""
        logits = self.net(x).masked_fill(~feasible, float("-inf"))
        return torch.log_softmax(logits, dim=-1)

    def weights(self) -> PolicyWeights:
        """The parameters as numpy arrays (for serving without torch)."""
        first, second = self.net[0], self.net[2]
        return PolicyWeights(
            first.weight.detach().numpy().T.copy(),
            first.bias.detach().numpy().copy(),
            second.weight.detach().numpy().T.copy(),
            second.bias.detach().numpy().copy(),
        )


def dpo_loss(
    policy_chosen: torch.Tensor,
    policy_rejected: torch.Tensor,
    ref_chosen: torch.Tensor,
    ref_rejected: torch.Tensor,
    beta: float,
    weights: torch.Tensor | None = None,
) -> torch.Tensor:
    """Mean DPO loss over pairs, from trajectory log-probabilities under the policy and the reference
    (`weights`: per-pair weights, e.g. the reward gap; the mean is then weighted)."""
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    losses = -nn.functional.logsigmoid(beta * margin)
    if weights is None:
        return losses.mean()
    return (losses * weights).sum() / weights.sum()


def trajectory_log_probs(
    log_probs: torch.Tensor, decisions: Sequence[Sequence[tuple[int, int]]]
) -> torch.Tensor:
    """Σ_t log π(a_t | s_t) per trajectory, from the state-by-action log-probability matrix."""
    states = [s for d in decisions for s, _ in d]
    actions = [a for d in decisions for _, a in d]
    owner = [i for i, d in enumerate(decisions) for _ in d]
    picked = log_probs[torch.tensor(states), torch.tensor(actions)]
    return torch.zeros(len(decisions), dtype=picked.dtype).index_add(0, torch.tensor(owner), picked)


@dataclass
class TrainResult:
    """What a training produced."""

    sft: PolicyWeights
    """Weights after SFT."""
    dpo: PolicyWeights | None
    """Weights after DPO (None: SFT only)."""
    curves: dict[str, list[dict[str, float]]] = field(default_factory=dict)
    """stage -> one point per evaluation: epoch, loss, heldout_accuracy, heldout_reward (, margin)."""
    split: dict[str, list[str]] = field(default_factory=dict)
    """"train" / "heldout" -> task user ids."""
    data: dict[str, int] = field(default_factory=dict)
    """Counts: tasks, decisions, pairs."""


def split_rows(rows: Sequence[dict[str, Any]], fraction: float, seed: int) -> tuple[list[int], list[int]]:
    """(training, held-out) row numbers: a seeded share held out (at least one of each when possible)."""
    order = np.random.default_rng(seed).permutation(len(rows))
    held = min(max(1, round(len(rows) * fraction)), len(rows) - 1) if len(rows) > 1 else 0
    return sorted(order[held:].tolist()), sorted(order[:held].tolist())


class _Evaluator:
    """Held-out figures of a policy: expert accuracy, greedy reward, preference margin."""

    def __init__(
        self,
        rows: Sequence[dict[str, Any]],
        heldout: list[int],
        table: StateTable,
        max_steps: int,
        lam: float,
        expert: Callable[[dict[str, Any]], str],
    ):
        self.rows, self.heldout, self.table, self.max_steps, self.lam = rows, heldout, table, max_steps, lam
        self.expert = [d for n in heldout for d in table.decisions(n, rows[n], expert(rows[n]))]

    def __call__(self, weights: PolicyWeights) -> dict[str, float]:
        correct = 0
        if self.expert:
            states = [s for s, _ in self.expert]
            x = np.stack([self.table.vectors[s] for s in states])
            feasible = np.asarray([self.table.masks[s] for s in states])
            chosen = np.where(feasible, weights.logits(x), -np.inf).argmax(axis=1)
            correct = int((chosen == np.asarray([a for _, a in self.expert])).sum())
        rewards = []
        for n in self.heldout:
            chain = greedy_chain(self.rows[n], weights, self.max_steps, self.table, n)
            value = reward_of(self.rows[n], chain, self.lam)
            if value is not None:
                rewards.append(value)
        return {
            "heldout_accuracy": correct / len(self.expert) if self.expert else math.nan,
            "heldout_reward": float(np.mean(rewards)) if rewards else math.nan,
        }


def train_policy(
    rows: Sequence[dict[str, Any]],
    max_steps: int,
    lam: float,
    config: TrainConfig,
    sft_only: bool = False,
    on_progress: Callable[[str, int, int], None] | None = None,
    space: ActionSpace | None = None,
) -> TrainResult:
    """SFT (then DPO unless `sft_only`) on `rows` over `space`'s actions (default ChainRec's
    catalog); deterministic for the same rows and config."""
    if len(rows) < 2:
        from world.errors import RecgraphError

        raise RecgraphError(f"training needs at least 2 trajectory tasks, got {len(rows)}")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(rows, max_steps, lam, config, sft_only, on_progress, space or ActionSpace.default())
    finally:
        torch.set_num_threads(threads)


def _train(rows, max_steps, lam, config, sft_only, on_progress, space) -> TrainResult:  # type: ignore[no-untyped-def]
    torch.manual_seed(config.seed)
    warm_embeddings(rows)
    release_encoder()  # what follows reads only these vectors: the encoder's memory leaves the peak
    train, heldout = split_rows(rows, config.heldout_fraction, config.seed)
    table = StateTable(max_steps, space, planner_state=config.state)
    chosen = [rows[n] for n in train]
    fit = cross_fit(chosen, seed=config.seed)
    signal = signal_of(chosen, fit) if fit else None
    support = chain_support(chosen, config.support_by, config.support_per_scenario)
    target = expert_rule(rows, train, config, fit, support)
    expert = [d for n in train for d in table.decisions(n, rows[n], target(rows[n]))]
    rng = np.random.default_rng(config.seed)
    pairs = {
        part: [(n, c, r, w) for n in numbers for c, r, w in task_pairs(rows[n], config, rng, support, target)]
        for part, numbers in (("train", train), ("heldout", heldout))
    }
    trajectories = {
        part: (
            [table.decisions(n, rows[n], c) for n, c, _, _ in found],
            [table.decisions(n, rows[n], r) for n, _, r, _ in found],
        )
        for part, found in pairs.items()
    }
    pair_weights = torch.tensor([w for *_, w in pairs["train"]], dtype=torch.float32)
    evaluate = _Evaluator(rows, heldout, table, max_steps, lam, target)
    x_np, feasible_np = table.arrays()
    x, feasible = torch.from_numpy(x_np), torch.from_numpy(feasible_np)
    states = torch.tensor([s for s, _ in expert])
    actions = torch.tensor([a for _, a in expert])
    features, n_actions = feature_dim(space.tools, config.state), len(space.actions)
    policy = Policy(features, config.hidden, n_actions)
    optimiser = torch.optim.Adam(policy.parameters(), lr=config.sft_lr, weight_decay=config.weight_decay)
    curves: dict[str, list[dict[str, float]]] = {"sft": [], "dpo": []}
    total = config.sft_epochs + (0 if sft_only else config.dpo_epochs)
    for epoch in range(1, config.sft_epochs + 1):
        optimiser.zero_grad()
        loss = nn.functional.nll_loss(policy.log_probs(x[states], feasible[states]), actions)
        loss.backward()
        optimiser.step()
        if epoch % config.eval_every == 0 or epoch == config.sft_epochs:
            train_acc = _accuracy(policy, x[states], feasible[states], actions)
            point = {
                "epoch": epoch,
                "loss": loss.item(),
                "train_accuracy": train_acc,
                **evaluate(policy.weights()),
            }
            curves["sft"].append(point)
        if on_progress:
            on_progress("sft", epoch, total)
    sft = policy.weights()
    result = TrainResult(
        sft,
        None,
        curves,
        {"train": [rows[n]["user_id"] for n in train], "heldout": [rows[n]["user_id"] for n in heldout]},
    )
    result.data = {
        "tasks": len(rows),
        "train_tasks": len(train),
        "heldout_tasks": len(heldout),
        "expert_decisions": len(expert),
        "dpo_pairs": len(pairs["train"]),
        "heldout_pairs": len(pairs["heldout"]),
        "states": len(table.vectors),
        "expert": chosen_expert(config, signal),
        "routing_signal": signal,
    }
    if sft_only or not pairs["train"]:
        return result
    reference = Policy(features, config.hidden, n_actions)
    reference.load_state_dict(policy.state_dict())
    reference.requires_grad_(False)
    with torch.no_grad():
        ref_logp = reference.log_probs(x, feasible)
        ref_c, ref_r = (trajectory_log_probs(ref_logp, t) for t in trajectories["train"])
    optimiser = torch.optim.Adam(policy.parameters(), lr=config.dpo_lr, weight_decay=config.weight_decay)
    curves["dpo"].append(
        {
            "epoch": 0,
            "loss": math.nan,
            "heldout_margin": heldout_margin(policy, x, feasible, trajectories["heldout"]),
            **evaluate(policy.weights()),
        }
    )
    for epoch in range(1, config.dpo_epochs + 1):
        optimiser.zero_grad()
        logp = policy.log_probs(x, feasible)
        chosen, rejected = (trajectory_log_probs(logp, t) for t in trajectories["train"])
        loss = dpo_loss(chosen, rejected, ref_c, ref_r, config.beta, pair_weights)
        if config.dpo_sft_weight:
            loss = loss + config.dpo_sft_weight * nn.functional.nll_loss(logp[states], actions)
        loss.backward()
        optimiser.step()
        if epoch % config.eval_every == 0 or epoch == config.dpo_epochs:
            margin = heldout_margin(policy, x, feasible, trajectories["heldout"])
            curves["dpo"].append(
                {"epoch": epoch, "loss": loss.item(), "heldout_margin": margin, **evaluate(policy.weights())}
            )
        if on_progress:
            on_progress("dpo", config.sft_epochs + epoch, total)
    result.dpo = policy.weights()
    return result


def _accuracy(policy: Policy, x: torch.Tensor, feasible: torch.Tensor, actions: torch.Tensor) -> float:
    with torch.no_grad():
        return float((policy.log_probs(x, feasible).argmax(dim=-1) == actions).float().mean())


def heldout_margin(
    policy: Policy, x: torch.Tensor, feasible: torch.Tensor, pairs: tuple[list, list]
) -> float:
    """Mean log π(τ_chosen) − log π(τ_rejected) over held-out pairs (nan without pairs)."""
    if not pairs[0]:
        return math.nan
    with torch.no_grad():
        logp = policy.log_probs(x, feasible)
        return float((trajectory_log_probs(logp, pairs[0]) - trajectory_log_probs(logp, pairs[1])).mean())
