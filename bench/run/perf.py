"""`recgraph bench perf`: orchestration overhead and throughput against the loopback LLM.

For each method, one recommendation graph invocation per user runs against the
simulated server with a fixed per-call latency L, at concurrency C. Reported per method:
- overhead_ms_per_user: wall time of an invocation minus the time in which at least one
  of its LLM calls was in flight (steady state: resources are loaded by a warm-up pass),
  at concurrency C (includes waiting for the CPU behind other users) and, as
  overhead_ms_per_user_alone, for users run one at a time (the pure per-user cost);
- critical_path_depth: the longest chain of dependent LLM calls;
- throughput_users_per_s against the ideal C / (depth · L), and their ratio;
- input tokens, LLM calls and failed attempts (llm_errors_per_user: should be 0) per user;
- cpu_ms_per_user: this process's CPU time (all threads) over the timed pass per user: unlike wall
  times it hardly depends on what else the machine runs;
- the client floor (bench/run/client_floor.py): the requests the method sent in the warm-up pass,
  replayed by a bare `ChatOpenAI.ainvoke` loop at the same concurrency and latency, and the
  method's throughput over it (`efficiency_vs_client`);
- the mean per user of every numeric figure the method puts in its outputs' `details`;
- whatever the method's `perf_extras` hook adds (graphs/registry.py), measured after the timed pass.
"""

from __future__ import annotations

import asyncio
import math
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agents.usage import critical_path_depth
from bench.protocol.spec import EvalCase
from bench.run.client_floor import RequestRecorder, client_floor
from bench.run.invoke import timed_invocation
from bench.run.item_prefetch import prefetch_item_vectors
from graphs.hooks import PerfRequest, PrepareRequest
from graphs.registry import hook, method_context
from state.context import Context
from world.environment import get_environment


def busy_time(intervals: Sequence[tuple[float, float]]) -> float:
    """Length of the union of (start, end) intervals."""
    total, reach = 0.0, -math.inf
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def overhead_of(seconds: float, output: dict[str, Any]) -> float:
    """An invocation's wall time minus the time any of its LLM calls was in flight."""
    intervals = [tuple(i) for r in output.get("usage") or [] for i in r["intervals"]]
    return seconds - busy_time(intervals)


async def _timed_batch(
    method: str,
    cases: Sequence[EvalCase],
    scenario: str,
    context: Context,
    concurrency: int,
    recorders: dict[str, RequestRecorder] | None = None,
) -> tuple[float, list[tuple[float, dict[str, Any]]]]:
    """Run every case at `concurrency`; with `recorders`, each case's requests are recorded under
    its user id (the warm-up pass only: a callback handler costs CPU the timed pass must not pay)."""

    def configure(case: EvalCase) -> dict[str, Any]:
        recorder = recorders.setdefault(case.user_id, RequestRecorder())  # type: ignore[union-attr]
        return {"callbacks": [recorder]}

    runner = timed_invocation(method, scenario, context, configure if recorders is not None else None)
    started = time.perf_counter()
    timed = await runner.abatch(list(cases), config={"max_concurrency": concurrency})
    results = [(seconds, output) for _, output, seconds in timed]
    return time.perf_counter() - started, results


def measure_method(
    method: str,
    cases: Sequence[EvalCase],
    scenario: str,
    context: Context,
    concurrency: int,
    latency: float,
) -> dict[str, Any]:
    """Embed the item vectors the cases read, run the method's `perf_prepare` hook (in a scratch
    folder), warm up, then time one invocation per case; returns the perf.json entry."""
    context = method_context(method, context)
    prefetch_item_vectors(method, get_environment(context.dataset), cases, scenario)  # not timed
    prepare = hook(method, "perf_prepare")
    if prepare is None:
        return _measure(method, cases, scenario, context, concurrency, latency)
    users = [case.user_id for case in cases]
    protocol = {"dataset": context.dataset, "scenario": scenario, "users": len(users), "llm": "sim"}
    with tempfile.TemporaryDirectory(prefix=f"recgraph-perf-{method}-") as scratch:
        request = PrepareRequest(method, users, scenario, protocol, Path(scratch), concurrency, context)
        prepared = prepare(request)
        entry = _measure(method, cases, scenario, prepared.context, concurrency, latency)
    return {**entry, **prepared.metrics}


def _measure(
    method: str,
    cases: Sequence[EvalCase],
    scenario: str,
    context: Context,
    concurrency: int,
    latency: float,
) -> dict[str, Any]:
    warmup = list(cases[: max(1, min(len(cases), concurrency))])
    recorders: dict[str, RequestRecorder] = {}
    asyncio.run(_timed_batch(method, warmup, scenario, context, concurrency, recorders))
    _, alone = asyncio.run(_timed_batch(method, warmup[:8], scenario, context, 1))
    cpu = time.process_time()
    wall, results = asyncio.run(_timed_batch(method, cases, scenario, context, concurrency))
    cpu = time.process_time() - cpu
    overheads, depths, tokens, calls, errors = [], [], [], [], []
    for seconds, output in results:
        overheads.append(overhead_of(seconds, output))
        records = output.get("usage") or []
        depths.append(critical_path_depth(records))
        tokens.append(sum(r["input_tokens"] for r in records))
        calls.append(sum(r["calls"] for r in records))
        errors.append(sum(sum((r.get("errors") or {}).values()) for r in records))
    users = len(results)
    depth = max(depths) if depths else 0
    throughput = users / wall
    ideal = concurrency / (depth * latency) if depth and latency > 0 else math.inf
    entry = {
        "overhead_ms_per_user": 1000 * math.fsum(overheads) / users,
        "overhead_ms_per_user_alone": 1000 * math.fsum(overhead_of(*r) for r in alone) / len(alone),
        "critical_path_depth": depth,
        "throughput_users_per_s": throughput,
        "ideal_users_per_s": ideal,
        "efficiency": throughput / ideal if math.isfinite(ideal) else None,
        "input_tokens_per_user": math.fsum(tokens) / users,
        "llm_calls_per_user": math.fsum(calls) / users,
        "llm_errors_per_user": math.fsum(errors) / users,
        "cpu_ms_per_user": 1000 * cpu / users,
        "wall_seconds": wall,
        "users": users,
    }
    plans = [recorder.plan() for recorder in recorders.values()]
    entry.update(client_floor(plans, users, context, concurrency, latency))
    floor = entry["client_floor_users_per_s"]
    entry["efficiency_vs_client"] = throughput / floor if floor else None
    means = details_means([output for _, output in results])
    if means:
        entry["details_mean_per_user"] = means
    extras = hook(method, "perf_extras")
    if extras is not None:
        requests = [case.request(scenario) for case in cases]
        outputs = [output for _, output in results]
        entry.update(extras(PerfRequest(requests, scenario, context, concurrency, outputs)))
    return entry


def details_means(outputs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Mean per user of each numeric field of the outputs' `details` (a user without it counts 0)."""
    sums: dict[str, float] = {}
    for output in outputs:
        for key, value in (output.get("details") or {}).items():
            if isinstance(value, int | float):  # bools count as 0/1: a share of users
                sums[key] = sums.get(key, 0.0) + float(value)
    return {key: total / len(outputs) for key, total in sums.items()} if outputs else {}


PERF_TIMEOUT_SLACK_S = 5.0
"""Client timeout in `bench perf` beyond the simulated latency: the simulator injects no faults there,
so a timeout could only come from a loaded machine, and its retry would lengthen the critical path."""


def perf_context(base: Context, base_url: str, latency: float = 0.0) -> Context:
    """The benchmark's context pointed at the simulator, with a timeout no answer of `latency`
    seconds reaches on a busy machine."""
    timeout = max(base.llm_timeout, latency + PERF_TIMEOUT_SLACK_S)
    return replace(
        base, llm="sim", rec_model="", mem_model="", planner_model="", base_url=base_url, llm_timeout=timeout
    )
