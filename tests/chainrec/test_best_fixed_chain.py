"""The held-out table's `best_fixed` chain: its numpy path (`complete_means`, per tool set) gives
every candidate chain's mean reward bit for bit as the per-chain loop does, and so the same chain,
on generated ChainRec trajectories (sampled chains, so most chains are scored through their tool
set) and on hand-made rows."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from agents.chainrec.offline.chains import chain_code
from agents.chainrec.offline.planner_eval import _RowRewards, best_fixed_chain, complete_means
from agents.chainrec.offline.training_tasks import TrajectoryConfig
from agents.chainrec.offline.trajectories import generate, read_rows
from state.chainrec.context import ChainRecContext
from world.environment import get_environment

SAMPLED = TrajectoryConfig(dataset="ml-100k", tasks=6, candidates=8, chain_cap=12, lam=0.01)


def loop_means(rows: list[dict], lam: float) -> dict[str, float]:
    """The per-chain loop, written out: every chain's rewards over the rows that can score it, kept
    for the chains scored most often."""
    tables = [_RowRewards(row, lam) for row in rows]
    scored: dict[str, list[float]] = {}
    for name in set().union(*(table.scored for table in tables)):
        tools = name.split(">")
        values = [table.value(name, tools, frozenset(tools)) for table in tables if set(tools) <= table.own]
        scored[name] = [v for v in values if v is not None]
    most = max(len(values) for values in scored.values())
    return {name: float(np.mean(v)) for name, v in scored.items() if len(v) == most}


def test_tool_set_means_equal_the_loop_s_bit_for_bit(tmp_path: Path) -> None:
    rows = read_rows(generate(get_environment("ml-100k"), ChainRecContext(), SAMPLED, tmp_path).path)
    for lam in (0.01, 0.0, 0.2):
        tables = [_RowRewards(row, lam) for row in rows]
        names = sorted(set().union(*(table.scored for table in tables)))
        found = complete_means(tables, names)
        assert found is not None
        chains, means = found
        expected = loop_means(rows, lam)
        assert sorted(chains) == sorted(expected)
        assert all(expected[chain] == float(mean) for chain, mean in zip(chains, means, strict=True))
        best = min(expected, key=lambda n: (-expected[n], n.count(">"), n))
        assert best_fixed_chain(rows, lam) == best


def test_hand_made_rows_each_chain_averaged_over_the_rows_that_score_it() -> None:
    def row(tools: list[str], chains: list[tuple[list[str], float]], sets: dict[str, float]) -> dict:
        return {
            "tools": tools,
            "chains": [[chain_code(tools, chain), "k", value] for chain, value in chains],
            "rankings": {chain_code(tools, key.split(">")): {"avg_hr": hr} for key, hr in sets.items()},
            "tool_tokens": {},
        }

    rows = [
        row(["A", "B"], [(["A"], 0.5), (["B", "A"], 0.25)], {}),
        row(["B"], [(["B"], 0.9)], {}),
        row(["A", "B"], [(["B"], 0.125)], {"A": 0.375}),  # A by its set's ranking: 0.375 - 1 step x 0.1
    ]
    tables = [_RowRewards(r, 0.1) for r in rows]
    chains, means = complete_means(tables, sorted(set().union(*(t.scored for t in tables))))
    # A: rows 1 and 3 (0.5, 0.275); B: rows 2 and 3 (0.9, 0.125); B>A: row 1 only (row 3 has no
    # ranking of {A, B}), so it is not among the chains scored most often
    assert dict(zip(chains, means.tolist(), strict=True)) == {"A": 0.3875, "B": 0.5125}
    loop = loop_means(rows, 0.1)
    assert best_fixed_chain(rows, 0.1) == "B" == min(loop, key=lambda n: -loop[n])
