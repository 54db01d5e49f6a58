"""The tokens each method's prompts take, measured before a run: the methods run on a few of the
run's users against the loopback simulator (bench/sim_process.py: no request leaves the machine),
in a temporary folder deleted afterwards, through the bench runner itself. The prompts are the ones
the methods' own builders render for those users; the simulator counts ≈4 characters per token
(bench/sim_engine.py) as recgraph does wherever a backend reports no usage (agents/usage.py), since
tiktoken's encodings are not available offline.

Methods that need a trained planner (`MethodSpec.trained_state`) are not run: their tokens per call
are those of the method sharing their graph without one (e.g. chainrec_learned from chainrec), times
their own `llm_calls` plan.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from bench.cost.measured import Usage, measured_usage
from bench.protocol import EvalCase, Protocol
from graphs.registry import METHODS
from state.context import Context

PROBE_USERS = 5
"""Users the probe ranks per method (spread over the run's users)."""


@dataclass(frozen=True)
class Probed:
    """One method's measured usage per user, and where it comes from."""

    per_user: Usage
    """Calls and tokens per user (ranking and prepare) under the simulator."""
    rank_calls: dict[str, float]
    """Ranking requests per user, per agent (to price their outputs at their budgets)."""
    rank_output: float
    """Output tokens per user of the ranking alone (the rest is the prepare hook's)."""
    source: str
    """The method whose run it was measured on (itself, or its untrained sibling)."""


def sibling(method: str) -> str | None:
    """For a method that needs a trained planner, the method sharing its graph without one."""
    spec = METHODS[method]
    if not spec.trained_state:
        return method
    return next((m for m, s in METHODS.items() if s.graph == spec.graph and not s.trained_state), None)


def spread(cases: Sequence[EvalCase], count: int) -> list[EvalCase]:
    """`count` cases spread evenly over `cases` (all of them when there are fewer)."""
    if len(cases) <= count:
        return list(cases)
    step = len(cases) / count
    return [cases[int(i * step)] for i in range(count)]


def probe(
    methods: Sequence[str],
    cases: Sequence[EvalCase],
    protocol: Protocol,
    context: Context,
    users: int = PROBE_USERS,
) -> dict[str, Probed]:
    """Every LLM method's usage per user, measured on `users` of `cases` under the simulator."""
    from bench.runner import run_benchmark
    from bench.sim_process import SimServer
    from world.results_log import ResultsLog

    wanted = [m for m in methods if METHODS[m].kind == "llm"]
    runs = list(dict.fromkeys(s for m in wanted if (s := sibling(m)) is not None))
    if not runs or not cases:
        return {}
    chosen = spread(cases, users)
    sim_protocol = replace(protocol, llm="sim", users=len(chosen))
    with (
        tempfile.TemporaryDirectory(prefix="recgraph-probe-") as folder,
        SimServer(seed=protocol.seed) as server,
    ):
        sim = replace(
            context, llm="sim", base_url=server.base_url, llm_timeout=2.0, llm_backoff=0.05,
            rec_model="", mem_model="", planner_model="",
        )  # fmt: skip
        log = ResultsLog(Path(folder) / "results.jsonl", sim_protocol.as_dict())
        results = run_benchmark(runs, chosen, sim_protocol, log, 4, sim)
        agents = {m: _agent_calls(log, m, len(chosen)) for m in runs}
    n = len(chosen)
    found = {
        m: Probed(measured_usage(results[m]).per(n), agents[m], results[m].get("output_tokens", 0) / n, m)
        for m in runs
    }
    return {m: found[s] for m in wanted if (s := sibling(m)) in found}


def _agent_calls(log: object, method: str, users: int) -> dict[str, float]:
    """Ranking requests per user, per agent, from the probe's records."""
    totals: dict[str, float] = {}
    for record in log.done(method).values():  # type: ignore[attr-defined]
        for agent, row in (record.get("agents") or {}).items():
            totals[agent] = totals.get(agent, 0.0) + row.get("llm_calls", 0) / max(1, users)
    return totals
