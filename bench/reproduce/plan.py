"""Which bench runs a paper needs: one per scenario its tables use, each with the methods of those
tables that recgraph registers (looked up in `graphs.registry.METHODS` when asked, so a method another
helper adds later is picked up), and the paper's N, users and candidate source unless overridden."""

from __future__ import annotations

from dataclasses import dataclass

from bench.reproduce.papers import Paper
from graphs.registry import METHODS


@dataclass(frozen=True)
class ScenarioRun:
    """One `recgraph bench` run of a reproduction."""

    scenario: str
    """The scenario (world/scenarios.py)."""
    methods: tuple[str, ...]
    """The registered methods of the tables with a column in this scenario."""


def scenario_runs(paper: Paper) -> list[ScenarioRun]:
    """The paper's bench runs, in the order its tables first need each scenario."""
    runs = []
    for scenario in paper.scenarios:
        wanted = [
            r.method for t in paper.tables if scenario in t.scenarios for r in t.rows if r.method in METHODS
        ]
        runs.append(ScenarioRun(scenario, tuple(dict.fromkeys(m for m in wanted if m))))
    return runs


def missing_methods(paper: Paper) -> list[str]:
    """Methods the paper's rows map to that recgraph does not register (yet)."""
    return [m for m in paper.methods if m not in METHODS]


def filter_note(paper: Paper, given: int | None) -> str:
    """The paper's user filter (`min_interactions`: users with at least that many interactions), as
    applied through world/filters.py's `--min-user-interactions` to every scenario but cold_start
    (whose users have 2-3 interactions by definition); `given` overrides it (0: off)."""
    k = paper.protocol.get("min_interactions") if given is None else given
    if not k:
        return "no user filter" if paper.protocol.get("min_interactions") else ""
    return f"user filter: at least {k} interactions (--min-user-interactions {k}; not in cold_start)"
