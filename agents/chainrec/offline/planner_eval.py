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

from agents.chainrec.offline.chain_wins import chains_by_scenario
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
from agents.chainrec.online.planning import Planner
from agents.chainrec.online.policy import ActionSpace, PolicyWeights


def best_fixed_chain(rows: Sequence[dict[str, Any]], lam: float) -> str:
    """The chain (tool names joined by '>') with the highest mean reward over `rows`, among the chains
    the rows can score most often (all of them when the chains were enumerated; a sampled row scores a
    chain it did not run when the ranking of its tool set was recorded). Ties: fewer steps, then name."""
    tables = [_RowRewards(row, lam) for row in rows]
    names = set().union(*(table.scored for table in tables))
    found = complete_means(tables, sorted(names)) if all(t.order_free for t in tables) else None
    if found is not None:
        chains, means = found
        best = min(range(len(chains)), key=lambda k: (-float(means[k]), chains[k].count(">"), chains[k]))
        return chains[best]
    scored: dict[str, list[float]] = {}
    for name in names:
        tools = name.split(">")
        wanted = frozenset(tools)
        values = [table.value(name, tools, wanted) for table in tables if wanted <= table.own]
        scored[name] = [v for v in values if v is not None]
    most = max(len(values) for values in scored.values())
    complete = {name: values for name, values in scored.items() if len(values) == most}
    return min(complete, key=lambda n: (-float(np.mean(complete[n])), n.count(">"), n))


CHUNK = 4096
"""Chains whose rewards `complete_means` holds at once (a chunk x rows float matrix)."""


def complete_means(tables: Sequence[_RowRewards], names: list[str]) -> tuple[list[str], np.ndarray] | None:
    """`best_fixed_chain`'s candidates and their mean rewards, in numpy, for order-free rows: a chain's
    reward in a row is its recorded score or its tool set's, so rewards are looked up per tool set
    (a few thousand) rather than per chain (tens of thousands) and row. Each mean is numpy's over
    the same values in the same row order as the loop's, so the same float, bit for bit; None when
    there is no chain."""
    if not names:
        return None
    sets = [frozenset(name.split(">")) for name in names]
    where = {tools: k for k, tools in enumerate(dict.fromkeys(sets))}
    set_of = np.array([where[tools] for tools in sets], dtype=np.int64)
    index = {name: k for k, name in enumerate(names)}
    by_set, scored, counts = [], [], np.zeros(len(names), dtype=np.int64)
    for table in tables:
        values = np.array([_set_value(table, tools) for tools in where], dtype=np.float64)
        positions = np.array([index[name] for name in table.scored], dtype=np.int64)
        known = ~np.isnan(values[set_of])
        known[positions] = True
        counts += known
        by_set.append(values)
        scored.append((positions, np.array(list(table.scored.values()), dtype=np.float64)))
    most = int(counts.max())
    complete = np.flatnonzero(counts == most)
    means = np.empty(len(complete))
    for start in range(0, len(complete), CHUNK):
        rows = complete[start : start + CHUNK]
        block = np.empty((len(rows), len(tables)))
        for column, (values, (positions, given)) in enumerate(zip(by_set, scored, strict=True)):
            block[:, column] = values[set_of[rows]]
            inside = np.isin(positions, rows)
            block[np.searchsorted(rows, positions[inside]), column] = given[inside]
        if most == len(tables):
            means[start : start + CHUNK] = block.mean(axis=1)
        else:  # each chain's mean over the rows that score it, in row order
            means[start : start + CHUNK] = [np.mean(line[~np.isnan(line)]) for line in block]
    return [names[k] for k in complete], means


def _set_value(table: _RowRewards, tools: frozenset[str]) -> float:
    """The row's reward of an unrecorded chain over `tools`, in any order (NaN when the row cannot
    score it): `_RowRewards.set_reward`, as `_RowRewards.value` gives it."""
    value = table.set_reward(tools) if tools <= table.own else None
    return float("nan") if value is None else value


class _RowRewards:
    """`reward_of` of one row for many chains: a scored chain's reward by name and, when the row's
    tokens do not depend on the order (keyed by tool), an unscored chain's reward once per tool set
    (the same value `reward_of` gives every order of the set)."""

    def __init__(self, row: dict[str, Any], lam: float) -> None:
        """`row`: a trajectory row; `lam`: λ of R(τ)."""
        self.row, self.lam = row, lam
        self.own = frozenset(row["tools"])
        self.codes = {code: float(value) for code, _, value in row["chains"]}
        self.scored = {
            ">".join(chain_actions(row["tools"], code)[:-1]): value for code, value in self.codes.items()
        }
        self.order_free = not any(">" in key for key in row.get("tool_tokens", {}))
        self.by_set: dict[frozenset[str], float | None] = {}

    def value(self, name: str, tools: list[str], wanted: frozenset[str]) -> float | None:
        """R(τ) of the chain `tools` (named `name`, tool set `wanted`) in this row, None when unknown."""
        if name in self.scored:
            return self.scored[name]
        if not self.order_free:
            return reward_of(self.row, tools, self.lam, self.codes)
        return self.set_reward(wanted)

    def set_reward(self, wanted: frozenset[str]) -> float | None:
        """An order-free row's R(τ) of an unrecorded chain over the tool set `wanted`, whatever its
        order (computed once per set from the set's ranking; None when the row has none)."""
        if wanted not in self.by_set:
            ordered = [tool for tool in self.row["tools"] if tool in wanted]
            self.by_set[wanted] = reward_of(self.row, ordered, self.lam, {})  # {}: never a recorded score
        return self.by_set[wanted]


def _per_task(
    rows: Sequence[dict[str, Any]], chains: Sequence[Sequence[str]], lam: float
) -> list[float | None]:
    """AvgHR@{1,3,5} of each row's chain, None where the row cannot score it."""
    return [
        None if reward_of(row, tools, lam) is None else round(quality_of(row, tools), 6)
        for row, tools in zip(rows, chains, strict=True)
    ]


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
    rule: Planner | None = None,
    fixed_steps: int | None = None,
    state: str = "memory",
) -> dict[str, Any]:
    """Held-out reward / AvgHR / steps / tokens per planner, the best fixed chain's name, and each
    planner's AvgHR per held-out task (`per_task`, in `heldout_users` order; None where a row cannot
    score the chain) for paired comparisons. The rule planner: ChainRec's over its own catalog, `rule`
    over another (none given: no rule row); `fixed` runs the first `fixed_steps` recorded tools
    (default `max_steps`); `state`: the planner state the weights read."""
    space = space or ActionSpace.default()
    by_user = {row["user_id"]: row for row in rows}
    held = [by_user[u] for u in heldout_users]
    chosen = best_fixed_chain([by_user[u] for u in train_users], lam)
    fixed_tools = chosen.split(">")
    table = StateTable(max_steps, space, planner_state=state)
    chains: dict[str, list[list[str]]] = {
        "fixed": [list(row["tools"][: fixed_steps or max_steps]) for row in held],
        "best_fixed": [[t for t in fixed_tools if t in row["tools"]] for row in held],
    }
    if space == ActionSpace.default() or rule is not None:
        decide = planner_decide(rule or RulePlanner(), max_steps, space)
        chains["rule"] = [roll_out(row, decide, max_steps, space) for row in held]
    for name, found in weights.items():
        chains[name] = [greedy_chain(row, found, max_steps, table, i) for i, row in enumerate(held)]
    chains["oracle"] = [chain_actions(row["tools"], best_chain(row)[0])[:-1] for row in held]
    return {
        "heldout_tasks": len(held),
        "best_fixed_chain": chosen,
        "planners": {name: _summary(held, found, lam) for name, found in chains.items()},
        "heldout_users": list(heldout_users),
        "per_task": {name: _per_task(held, found, lam) for name, found in chains.items()},
        "chains_by_scenario": chains_by_scenario(held, chains),
    }
