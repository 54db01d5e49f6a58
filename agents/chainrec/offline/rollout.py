"""Planners replayed on recorded trajectory rows (no tool runs again): the greedy chain a policy or
a planner picks on a task, and the reward that chain earned in the row. Used for the training
curves and for the held-out comparison of planners (the paper's Table 3 shape)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from agents.chainrec.offline.chains import chain_actions, chain_code
from agents.chainrec.offline.policy_data import StateTable, memory_at, row_mask
from agents.chainrec.offline.reward import reward
from agents.chainrec.online.catalog import CANDIDATE_RANK
from agents.chainrec.online.planning import Planner, PlanView
from agents.chainrec.online.policy import ActionSpace, PolicyWeights

Decide = Callable[[dict[str, Any], tuple[str, ...]], str]
"""(row, tools run so far) -> the next action."""


def roll_out(
    row: dict[str, Any], decide: Decide, max_steps: int, space: ActionSpace | None = None
) -> list[str]:
    """The tools a decision rule runs on this task before CandidateRank (actions of `space`)."""
    space = space or ActionSpace.default()
    used: tuple[str, ...] = ()
    while True:
        mask, _ = row_mask(row, used, max_steps, space)
        feasible = [a for a in space.actions if mask.get(a, False)]
        action = feasible[0] if len(feasible) == 1 else decide(row, used)
        if action == CANDIDATE_RANK or action not in feasible:
            return list(used)
        used = (*used, action)


def greedy_chain(
    row: dict[str, Any], weights: PolicyWeights, max_steps: int, table: StateTable, number: int
) -> list[str]:
    """The policy's most likely action at each step (masked), until CandidateRank."""

    def decide(r: dict[str, Any], used: tuple[str, ...]) -> str:
        state = table.state(number, r, used)
        logits = np.where(table.masks[state], weights.logits(table.vectors[state]), -np.inf)
        return table.space.actions[int(np.argmax(logits))]

    return roll_out(row, decide, max_steps, table.space)


def row_view(
    row: dict[str, Any], used: Sequence[str], max_steps: int, space: ActionSpace | None = None
) -> PlanView:
    """What an online planner would see on this task after `used` ran (recorded memory; the mask
    over `space`'s catalog, default ChainRec's)."""
    domain = row["facts"]["domain"]
    mask, notes = row_mask(row, used, max_steps, space)
    task = row["task"]
    memory = tuple(memory_at(row, list(used)))
    return PlanView(
        task["user_id"], tuple(task["candidates"]), task["scenario"], memory, mask, notes, max_steps, domain
    )


def planner_decide(planner: Planner, max_steps: int, space: ActionSpace | None = None) -> Decide:
    """A model-free online planner as a decision rule over recorded memory (over `space`)."""

    def decide(row: dict[str, Any], used: tuple[str, ...]) -> str:
        return planner.decide(row_view(row, used, max_steps, space)).action

    return decide


def chain_tokens(row: dict[str, Any], tools: Sequence[str]) -> int:
    """Model tokens the chain's tool calls spent in this row (0 when the row records none)."""
    spent = row.get("tool_tokens", {})
    return sum(int(spent.get(tool, spent.get(">".join(tools[: i + 1]), 0))) for i, tool in enumerate(tools))


def quality_of(row: dict[str, Any], tools: Sequence[str], lam: float = 0.0) -> float | None:
    """AvgHR@{1,3,5} of the chain's ranking in this row (None when it is not recorded; `lam` unused,
    kept for callers that pass it)."""
    if not tools:
        return None
    code = chain_code(row["tools"], tools)
    key = next((k for found, k, _ in row["chains"] if found == code), None)
    if key is None:
        key = chain_code(row["tools"], [t for t in row["tools"] if t in tools])
    ranking = row["rankings"].get(key)
    return float(ranking["avg_hr"]) if ranking else None


def rescored(row: dict[str, Any], lam: float, cost_lam: float) -> dict[str, Any]:
    """The row with each chain's R(τ) recomputed from its recorded AvgHR, length and tokens under
    `lam` and token weight `cost_lam`."""
    chains = []
    for code, key, _ in row["chains"]:
        tools = chain_actions(row["tools"], code)[:-1]
        quality = row["rankings"][key]["avg_hr"]
        value = reward(quality, len(tools), lam, chain_tokens(row, tools), cost_lam)
        chains.append([code, key, round(value, 6)])
    return {**row, "chains": chains, "cost_lam": cost_lam}


def with_cost(rows: list[dict[str, Any]], lam: float, cost_lam: float) -> list[dict[str, Any]]:
    """The rows scored with token weight `cost_lam` (`rescored`: what generating them with that
    weight would have written). A row's rankings and tokens do not depend on the weight, so one
    trajectory set serves every λ_cost."""
    return [
        row if float(row.get("cost_lam", 0.0)) == cost_lam else rescored(row, lam, cost_lam) for row in rows
    ]


def reward_of(
    row: dict[str, Any],
    tools: Sequence[str],
    lam: float,
    scored: dict[str, float] | None = None,
    cost_lam: float | None = None,
) -> float | None:
    """R(τ) of the chain `tools` on this task: the row's score, or (a sampled row without it) from
    the ranking of its tool set when recorded; None when unknown. A chain with no tool is
    CandidateRank on an empty memory, which the mask forbids: None. `scored`: the row's code ->
    reward map, when the caller looks up many chains; `cost_lam`: default the row's own (`cost_lam`
    in rows of a library whose tools differ in cost, else 0)."""
    if not tools:
        return None
    code = chain_code(row["tools"], tools)
    if scored is not None:
        if code in scored:
            return scored[code]
    else:
        for found, _, value in row["chains"]:
            if found == code:
                return float(value)
    key = chain_code(row["tools"], [t for t in row["tools"] if t in tools])
    ranking = row["rankings"].get(key)
    if not ranking:
        return None
    cost = float(row.get("cost_lam", 0.0)) if cost_lam is None else cost_lam
    return reward(ranking["avg_hr"], len(tools), lam, chain_tokens(row, tools), cost)
