"""The held-out comparison of planners on recorded trajectories (the paper's Table 3 shape): per
planner the mean reward R(τ), AvgHR@{1,3,5} and steps over held-out training tasks.

Planners: `fixed` (every feasible tool in catalog order, as `chainrec_fixed`), `best_fixed` (the one
chain with the highest mean reward on the *training* tasks, applied to every held-out task), `rule`,
`sft`, `learned` (SFT then DPO) and `oracle` (each task's best chain: the ceiling).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from agents.chainrec.offline.chains import chain_actions
from agents.chainrec.offline.policy_data import StateTable, best_chain
from agents.chainrec.offline.rollout import (
    chain_tokens,
    greedy_chain,
    planner_decide,
    quality_of,
    reward_of,
    roll_out,
)
from agents.chainrec.online.planners import RulePlanner
from agents.chainrec.online.policy import ActionSpace, PolicyWeights


def best_fixed_chain(rows: Sequence[dict[str, Any]], lam: float) -> str:
    """The chain (tool names joined by '>') with the highest mean reward over `rows`, among the chains
    the rows can score most often (all of them when the chains were enumerated; a sampled row scores a
    chain it did not run when the ranking of its tool set was recorded). Ties: fewer steps, then name."""
    names = {">".join(chain_actions(row["tools"], code)[:-1]) for row in rows for code, _, _ in row["chains"]}
    maps = [{code: float(value) for code, _, value in row["chains"]} for row in rows]
    scored: dict[str, list[float]] = {}
    for name in names:
        tools = name.split(">")
        values = [
            reward_of(row, tools, lam, table)
            for row, table in zip(rows, maps, strict=True)
            if set(tools) <= set(row["tools"])
        ]
        scored[name] = [v for v in values if v is not None]
    most = max(len(values) for values in scored.values())
    complete = {name: values for name, values in scored.items() if len(values) == most}
    return min(complete, key=lambda n: (-float(np.mean(complete[n])), n.count(">"), n))


def _summary(rows: Sequence[dict[str, Any]], chains: Sequence[Sequence[str]], lam: float) -> dict[str, float]:
    rewards, qualities, steps, tokens = [], [], [], []
    for row, tools in zip(rows, chains, strict=True):
        value = reward_of(row, tools, lam)
        if value is None:
            continue
        rewards.append(value)
        qualities.append(quality_of(row, tools))
        steps.append(len(tools))
        tokens.append(chain_tokens(row, tools))
    return {
        "tasks": len(rewards),
        "reward": round(float(np.mean(rewards)), 4) if rewards else float("nan"),
        "avg_hr": round(float(np.mean(qualities)), 4) if qualities else float("nan"),
        "steps": round(float(np.mean(steps)), 3) if steps else float("nan"),
        "tokens": round(float(np.mean(tokens)), 1) if tokens else float("nan"),
    }


def compare_planners(
    rows: Sequence[dict[str, Any]],
    train_users: Sequence[str],
    heldout_users: Sequence[str],
    weights: dict[str, PolicyWeights],
    max_steps: int,
    lam: float,
    space: ActionSpace | None = None,
) -> dict[str, Any]:
    """Held-out reward / AvgHR / steps / tokens per planner, and the best fixed chain's name (the
    rule planner only over ChainRec's own catalog)."""
    space = space or ActionSpace.default()
    by_user = {row["user_id"]: row for row in rows}
    held = [by_user[u] for u in heldout_users]
    chosen = best_fixed_chain([by_user[u] for u in train_users], lam)
    fixed_tools = chosen.split(">")
    table = StateTable(max_steps, space)
    chains: dict[str, list[list[str]]] = {
        "fixed": [list(row["tools"][:max_steps]) for row in held],
        "best_fixed": [[t for t in fixed_tools if t in row["tools"]] for row in held],
    }
    if space == ActionSpace.default():
        decide = planner_decide(RulePlanner(), max_steps)
        chains["rule"] = [roll_out(row, decide, max_steps) for row in held]
    for name, found in weights.items():
        chains[name] = [greedy_chain(row, found, max_steps, table, i) for i, row in enumerate(held)]
    chains["oracle"] = [chain_actions(row["tools"], best_chain(row)[0])[:-1] for row in held]
    return {
        "heldout_tasks": len(held),
        "best_fixed_chain": chosen,
        "planners": {name: _summary(held, found, lam) for name, found in chains.items()},
    }
