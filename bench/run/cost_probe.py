"""The tokens each method's prompts take, measured before a run: the methods run on a few of the
run's users against the loopback simulator (llmsim/process.py: no request leaves the machine),
in a temporary folder deleted afterwards, through the bench runner itself. The prompts are the ones
the methods' own builders render for those users; the simulator counts ≈4 characters per token
(llmsim/engine.py) as recgraph does wherever a backend reports no usage (agents/usage.py), since
tiktoken's encodings are not available offline.

A method's prepare step (AMEM4Rec's pool training, MemRec's Stage W, AgentCF's training) need not
grow like its users: AMEM4Rec's first round of windows meets an empty pool and asks only the
extractor, every later window also the validator and the evolver. So when the run has more users than
twice `PROBE_USERS`, a method whose prepare step spent tokens is probed a second time on that many
users and its prepare cost is the line through the two (`fixed` + users × slope); a smaller run is
probed on all of its users (the plan is then the run under the simulator). A method that declares
its prepare step's units of work (`training_calls`: AMEM4Rec's windows, bench/cost/planned_training.py)
has that line fitted over its planned units instead of its users, since users differ in how many
windows they have (every window of each user under `PAPER_TRAINING`). The probes run with the run's
`--set` knobs (`Protocol.knobs`), so they train as the run will.

Methods that need a trained planner (`MethodSpec.trained_state`: chainrec_learned, chainrec_sft) are
probed as they are: their prepare step finds or trains the checkpoint in the dataset's cache (on the
heuristic tool answers whatever the backend: graphs/chainrec/learned.py), which the run then finds,
so the calls counted are those the trained planner routes (it stops well before its step budget).
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.cost.measured import ZERO, measured_usage, prepare_usage
from bench.cost.planned_training import planned_training
from bench.cost.probed import Probed
from bench.protocol.knob_settings import settings_of
from bench.protocol.spec import EvalCase, Protocol
from bench.run.crash import RunStopped
from bench.run.runner import run_benchmark
from graphs.registry import METHODS
from llmsim.process import SimServer
from state.context import Context
from world.errors import RecgraphError
from world.results_log import ResultsLog


class ProbeFailed(RecgraphError):
    """The cost probe could not rank its users under the loopback simulator (e.g. the loopback
    interface is down): the plan cannot be priced, said in one line."""


PROBE_USERS = 5
"""Users the probe ranks per method (spread over the run's users)."""


def spread(cases: Sequence[EvalCase], count: int) -> list[EvalCase]:
    """`count` cases spread evenly over `cases` (all of them when there are fewer); the cases of
    `count` are among those of `2 * count`."""
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
    """Every LLM method's usage, measured on `users` of `cases` under the simulator (all of them when
    there are at most 2 × `users`), and for a method whose prepare step spent tokens again on
    2 × `users` to fit that step's growth."""
    runs = [m for m in methods if METHODS[m].kind == "llm"]
    if not runs or not cases:
        return {}
    small = len(cases) <= 2 * users
    first = spread(cases, len(cases) if small else users)
    declared = planned_training(runs, cases, protocol, context)  # the run's own prepare work
    results, agents = _simulate(runs, first, protocol, context)
    n = len(first)
    steps = _steps(runs, first, protocol, context)
    found = {m: _probed(results[m], agents[m], n, steps.get(m)) for m in runs}
    growing = [m for m in runs if not small and prepare_usage(results[m]).input_tokens > 0]
    if growing:
        second = spread(cases, 2 * users)
        more, more_agents = _simulate(growing, second, protocol, context)
        more_steps = _steps(growing, second, protocol, context)
        for m in growing:
            small_probe, large_probe = (n, results[m]), (len(second), more[m])
            if m in steps and steps[m] != more_steps[m]:
                found[m] = _fitted_per_step(
                    small_probe, large_probe, (steps[m], more_steps[m]), more_agents[m]
                )
            else:
                found[m] = _fitted(small_probe, large_probe, more_agents[m])
    return {m: replace(p, training=declared.get(m)) for m, p in found.items()}


def _steps(
    methods: Sequence[str], chosen: Sequence[EvalCase], protocol: Protocol, context: Context
) -> dict[str, int]:
    """The probed users' planned units of prepare work, per method declaring them."""
    return {m: plan.steps for m, plan in planned_training(methods, chosen, protocol, context).items()}


def _probed(entry: dict[str, Any], agents: dict[str, float], n: int, steps: int | None = None) -> Probed:
    """Usage per user of one probe (prepare included; per unit of its work when `steps` is given)."""
    output = entry.get("output_tokens", 0) / n
    if steps:
        prepare = prepare_usage(entry)
        rank = (measured_usage(entry) - prepare).per(n)
        return Probed(rank, agents, output, ZERO, (n,), prepare.per(steps), (steps,))
    return Probed(measured_usage(entry).per(n), agents, output, ZERO, (n,))


Sample = tuple[int, dict[str, Any]]
"""One probe of a method: its users and its metrics.json entry."""


def _fitted(small: Sample, large: Sample, agents: dict[str, float]) -> Probed:
    """The prepare step as the line through the two probes; the ranking per user from the larger."""
    (n1, entry1), (n2, entry2) = small, large
    p1, p2 = prepare_usage(entry1), prepare_usage(entry2)
    slope = (p2 - p1).per(n2 - n1)
    fixed = p1 - slope.times(n1)
    rank = (measured_usage(entry2) - p2).per(n2)
    return Probed(rank + slope, agents, entry2.get("output_tokens", 0) / n2, fixed, (n1, n2))


def _fitted_per_step(
    small: Sample, large: Sample, steps: tuple[int, int], agents: dict[str, float]
) -> Probed:
    """The prepare step as the line through the two probes over their units of work (`steps`); the
    ranking per user from the larger probe."""
    (n1, entry1), (n2, entry2) = small, large
    p1, p2 = prepare_usage(entry1), prepare_usage(entry2)
    slope = (p2 - p1).times(1 / (steps[1] - steps[0]))
    fixed = p1 - slope.times(steps[0])
    rank = (measured_usage(entry2) - p2).per(n2)
    return Probed(rank, agents, entry2.get("output_tokens", 0) / n2, fixed, (n1, n2), slope, steps)


def _simulate(
    methods: Sequence[str], chosen: Sequence[EvalCase], protocol: Protocol, context: Context
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, float]]]:
    """Run `methods` on `chosen` under a fresh simulator in a temporary folder: metrics per method
    and ranking requests per user per agent."""
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
        knobs = settings_of(protocol.knobs, methods)  # the run's --set: the probe trains as it will
        try:
            results = run_benchmark(list(methods), list(chosen), sim_protocol, log, 4, sim, knobs=knobs)
        except RunStopped as stop:  # the probe is the plan's, not a run: its failure is one line
            raise ProbeFailed(f"the cost probe stopped at {stop.method}: {stop.error}") from stop
        agents = {m: _agent_calls(log, m, len(chosen)) for m in methods}
    return results, agents


def _agent_calls(log: object, method: str, users: int) -> dict[str, float]:
    """Ranking requests per user, per agent, from the probe's records."""
    totals: dict[str, float] = {}
    for record in log.done(method).values():  # type: ignore[attr-defined]
        for agent, row in (record.get("agents") or {}).items():
            totals[agent] = totals.get(agent, 0.0) + row.get("llm_calls", 0) / max(1, users)
    return totals
