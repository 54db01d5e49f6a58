"""From trajectory rows to what the policy learns from: states, expert decisions (the best chain per
task, Eq. 10) and preference pairs (Eq. 11), all as plain numpy arrays.

Best chain of a task (the hindsight expert): the highest reward; ties go to fewer steps, then to the
lower chain code (a fixed order, so the expert is deterministic). With heuristic tools AvgHR moves in
steps of 1/3, so many chains tie for a task's best and the hindsight choice is mostly a lucky single
tool; the *supported* expert (`support` given) picks, among the chains within `epsilon` of the
task's best, the one whose tool set has the highest mean reward over the training tasks — the chain
the data supports, which the state can predict (`ChainSupport`). A DPO pair (chosen, rejected) is
two chains of the same task where the chosen one has the higher reward, or the same reward in fewer
steps (modes "best", "any"); mode "gap" keeps only pairs whose AvgHR differs by at least `min_gap`
(a real quality gap, not a length tie-break) and weights each by its reward gap.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.chainrec.offline.chains import chain_actions
from agents.chainrec.online.catalog import CANDIDATE_RANK
from agents.chainrec.online.features import embed_lines, memory_line, policy_input
from agents.chainrec.online.mask import feasibility
from agents.chainrec.online.policy import ActionSpace
from state.chainrec.state import MemoryEntry


def chain_key(code: str, reward: float) -> tuple[float, int, str]:
    """Sort key putting the best chain first: reward desc, steps asc, code asc."""
    return (-reward, code.count(".") + 1, code)


def chain_name(row: dict[str, Any], code: str) -> str:
    """A chain's tool names joined by '>' (comparable across rows whose `tools` lists differ)."""
    return ">".join(chain_actions(row["tools"], code)[:-1])


def set_name(row: dict[str, Any], code: str) -> str:
    """A chain's tool set: its tool names sorted and joined by '+' (every order of the set shares it)."""
    return "+".join(sorted(chain_actions(row["tools"], code)[:-1]))


SUPPORT_BY = ("tool_set", "chain")
"""What `ChainSupport` averages over: every order of a tool set together, or each ordered chain."""
MIN_SUPPORT_SHARE = 0.5
"""A tool set (or chain) scored on fewer than this share of the best-covered one's tasks has no
support: a mean over a handful of sampled tasks is luck."""


@dataclass(frozen=True)
class ChainSupport:
    """Mean reward over the training tasks of each tool set (`by="tool_set"`, the default: with
    heuristic tools a chain's reward depends only on its set, and sampled rows score each long
    ordered chain on a few tasks only, so per-chain means of long chains are luck) or each ordered
    chain (`by="chain"`), among those scored on at least `MIN_SUPPORT_SHARE` of the best-covered
    one's tasks. With `per_scenario`, rows that name their scenario are averaged per scenario (a
    planner trained on a small scenario's tasks plus classic's backs each scenario's own chains)."""

    means: dict[str, float]
    """Tool set (or chain) name -> mean reward."""
    by: str = "tool_set"
    """"tool_set" or "chain"."""
    per_scenario: bool = True
    """Average per scenario when rows name one (False: all rows together)."""

    def group(self, row: dict[str, Any]) -> str:
        """The scenario `row` is averaged within ("" when not per scenario or the row names none)."""
        return row.get("task", {}).get("scenario", "") if self.per_scenario else ""

    def key(self, row: dict[str, Any], code: str) -> str:
        """The name a chain of `row` is averaged under, prefixed with its `group` when there is one
        (a planner trained over several scenarios backs each scenario's own chains)."""
        name = set_name(row, code) if self.by == "tool_set" else chain_name(row, code)
        group = self.group(row)
        return f"{group}:{name}" if group else name

    def of(self, row: dict[str, Any], code: str) -> float:
        """The mean reward behind a chain of `row` (-inf without support)."""
        return self.means.get(self.key(row, code), -math.inf)


def chain_support(
    rows: Sequence[dict[str, Any]], by: str = "tool_set", per_scenario: bool = True
) -> ChainSupport:
    """Each tool set's (or chain's) mean reward over `rows` (the training tasks): per task the mean of
    its scored orders, then the mean over the tasks that scored it (see `ChainSupport`)."""
    if by not in SUPPORT_BY:
        raise ValueError(f"unknown support {by!r}: {' or '.join(SUPPORT_BY)}")
    probe = ChainSupport({}, by, per_scenario)
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    group_of: dict[str, str] = {}
    for row in rows:
        per_task: dict[str, list[float]] = {}
        for code, _, value in row["chains"]:
            per_task.setdefault(probe.key(row, code), []).append(float(value))
        for name, values in per_task.items():
            sums[name] = sums.get(name, 0.0) + sum(values) / len(values)
            counts[name] = counts.get(name, 0) + 1
            group_of[name] = probe.group(row)
    most: dict[str, int] = {}
    for name, count in counts.items():
        most[group_of[name]] = max(most.get(group_of[name], 0), count)
    kept = {n: sums[n] / counts[n] for n in sums if counts[n] >= MIN_SUPPORT_SHARE * most[group_of[n]]}
    return ChainSupport(kept, by, per_scenario)


def best_chain(
    row: dict[str, Any], support: ChainSupport | None = None, epsilon: float = 0.0
) -> tuple[str, float]:
    """(code, reward) of the task's expert chain: the hindsight best, or with `support` the
    best-supported chain among those within `epsilon` of the task's best reward (ties as before)."""
    code, _, value = min(row["chains"], key=lambda c: chain_key(c[0], c[2]))
    if support is None:
        return code, value
    near = [c for c in row["chains"] if c[2] >= value - epsilon - 1e-9]
    code, _, value = min(near, key=lambda c: (-support.of(row, c[0]), *chain_key(c[0], c[2])))
    return code, value


def prefers(a: tuple[str, float], b: tuple[str, float]) -> bool:
    """True when chain a is preferred to chain b (Eq. 11: higher reward; ties: fewer steps)."""
    steps_a, steps_b = a[0].count(".") + 1, b[0].count(".") + 1
    return a[1] > b[1] or (a[1] == b[1] and steps_a < steps_b)


def row_mask(
    row: dict[str, Any], used: Sequence[str], max_steps: int, space: ActionSpace | None = None
) -> tuple[dict[str, bool], dict[str, str]]:
    """The feasibility mask of a recorded state over `space`'s catalog (default ChainRec's),
    restricted to the tools the row recorded."""
    catalog = (space or ActionSpace.default()).catalog
    mask, notes = feasibility(list(used), max_steps, row["facts"]["domain"], catalog)
    for action in mask:
        if action != CANDIDATE_RANK and action not in row["tools"] and mask[action]:
            mask[action] = False
            notes[action] = "not recorded in the trajectories"
    return mask, notes


def memory_at(row: dict[str, Any], tools: Sequence[str]) -> list[MemoryEntry]:
    """The memory after `tools` ran in this row's task (reused outputs; per prefix with an LLM)."""
    outputs = row["tool_outputs"]
    memory = []
    for i, tool in enumerate(tools):
        key = tool if tool in outputs else ">".join([*tools[:i], tool])
        memory.append({**outputs[key], "step": i + 1})
    return memory


@dataclass
class StateTable:
    """Every distinct state visited by the chains used, as rows of one feature matrix."""

    max_steps: int
    """T_max."""
    space: ActionSpace = field(default_factory=lambda: ActionSpace.default())
    """The actions planned over (the mask and the used-tool features follow its catalog)."""
    vectors: list[np.ndarray] = field(default_factory=list)
    """State vectors."""
    masks: list[list[bool]] = field(default_factory=list)
    """Feasible actions per state (over `space.actions`)."""
    index: dict[tuple[int, tuple[str, ...]], int] = field(default_factory=dict)
    """(row number, tools run) -> state number."""
    planner_state: str = "memory"
    """Which planner state the vectors describe (features.STATES)."""

    def state(self, number: int, row: dict[str, Any], used: tuple[str, ...]) -> int:
        """The state number of `used` in task `number` (added on first use). When the row's tool
        answers do not depend on the order (keyed by tool: the heuristic backend), every order of
        the same tools is one state (the features read the set and the mean memory embedding)."""
        outputs = row["tool_outputs"]
        key = (number, tuple(sorted(used)) if all(tool in outputs for tool in used) else used)
        if key not in self.index:
            memory = memory_at(row, used)
            lines = [memory_line(entry) for entry in memory]
            vectors = embed_lines(lines) if lines else {}
            mean = np.mean([vectors[line] for line in lines], axis=0) if lines else np.zeros(384, np.float32)
            mask, _ = row_mask(row, used, self.max_steps, self.space)
            self.index[key] = len(self.vectors)
            candidates = len(row["task"]["candidates"])
            vector = policy_input(
                self.planner_state,
                memory,
                candidates,
                self.max_steps,
                mean,
                self.space.tools,
                lambda: row["facts"],
            )
            self.vectors.append(vector)
            self.masks.append([bool(mask.get(action, False)) for action in self.space.actions])
        return self.index[key]

    def decisions(self, number: int, row: dict[str, Any], code: str) -> list[tuple[int, int]]:
        """(state, action) per decision of a chain."""
        actions = chain_actions(row["tools"], code)
        return [
            (self.state(number, row, tuple(actions[:i])), self.space.actions.index(action))
            for i, action in enumerate(actions)
        ]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(features, feasibility) as float32 / bool matrices."""
        return np.stack(self.vectors).astype(np.float32), np.asarray(self.masks, dtype=bool)


def warm_embeddings(rows: Sequence[dict[str, Any]]) -> None:
    """Embed every tool output line of `rows` in one batch (later look-ups are cached); the batch
    is shared across processes, so the learned routers that train on router_learned's trajectories
    in processes of their own find its vectors instead of encoding them again."""
    lines = [memory_line(entry) for row in rows for entry in row["tool_outputs"].values()]
    embed_lines(lines, shared=True)


def preference_pairs(
    row: dict[str, Any], per_task: int, rng: np.random.Generator, mode: str = "best"
) -> list[tuple[str, str]]:
    """(chosen, rejected) codes of one task. mode "best": the best chain against a seeded sample of
    chains it beats; "any": a seeded sample of chain pairs where one is preferred (Eq. 11), so the
    preferences of all chains, not only the hindsight best, shape the policy."""
    if mode == "any":
        return _any_pairs(row, per_task, rng)
    best = best_chain(row)
    beaten = [c[0] for c in row["chains"] if c[0] != best[0] and prefers(best, (c[0], c[2]))]
    if not beaten:
        return []
    picks = rng.choice(len(beaten), size=min(per_task, len(beaten)), replace=False)
    return [(best[0], beaten[i]) for i in sorted(picks)]


def gap_pairs(
    row: dict[str, Any],
    per_task: int,
    rng: np.random.Generator,
    min_gap: float,
    support: ChainSupport | None = None,
) -> list[tuple[str, str, float]]:
    """(chosen, rejected, reward gap) of one task: a seeded sample of chain pairs whose AvgHR differs
    by at least `min_gap` (so the preference is about the ranking, not a length tie-break; a row
    without its rankings compares rewards), the higher reward chosen. With `support` (mean reward
    per chain over the training tasks) a pair is kept only when the training tasks agree with this
    task on which chain is better, so one lucky outcome does not become a preference."""
    quality = {key: ranking["avg_hr"] for key, ranking in row["rankings"].items()}
    chains = [(code, float(value), float(quality.get(key, value))) for code, key, value in row["chains"]]
    found: dict[tuple[str, str], float] = {}
    for _ in range(per_task * 20):
        if len(found) >= per_task:
            break
        i, j = rng.choice(len(chains), size=2, replace=False)
        a, b = chains[int(i)], chains[int(j)]
        if abs(a[2] - b[2]) < min_gap - 1e-9 or a[1] == b[1]:
            continue
        good, bad = (a, b) if a[1] > b[1] else (b, a)
        if support is not None and support.of(row, good[0]) <= support.of(row, bad[0]):
            continue
        found[(good[0], bad[0])] = good[1] - bad[1]
    return [(c, r, gap) for (c, r), gap in found.items()]


def expert_pairs(
    row: dict[str, Any], expert: str, per_task: int, rng: np.random.Generator, min_gap: float
) -> list[tuple[str, str, float]]:
    """(expert, rejected, reward gap) of one task: the task's expert chain against a seeded sample
    of the chains whose AvgHR is at least `min_gap` below it (a row without its rankings compares
    rewards)."""
    quality = {key: ranking["avg_hr"] for key, ranking in row["rankings"].items()}
    scored = {code: (float(value), float(quality.get(key, value))) for code, key, value in row["chains"]}
    top_reward, top_quality = scored[expert]
    beaten = [
        code
        for code, (value, hr) in scored.items()
        if code != expert and hr <= top_quality - min_gap + 1e-9 and value < top_reward
    ]
    if not beaten:
        return []
    picks = rng.choice(len(beaten), size=min(per_task, len(beaten)), replace=False)
    return [(expert, beaten[i], top_reward - scored[beaten[i]][0]) for i in sorted(picks)]


def _any_pairs(row: dict[str, Any], per_task: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    chains = [(code, value) for code, _, value in row["chains"]]
    found: dict[tuple[str, str], None] = {}
    for _ in range(per_task * 20):
        if len(found) >= per_task:
            break
        i, j = rng.choice(len(chains), size=2, replace=False)
        a, b = chains[int(i)], chains[int(j)]
        if prefers(a, b):
            found[(a[0], b[0])] = None
        elif prefers(b, a):
            found[(b[0], a[0])] = None
    return list(found)
