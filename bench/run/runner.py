"""The batch runner: every method over the same cases, resumable, any concurrency."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING, Any

from bench.cost.planned_calls import call_plan_entry
from bench.protocol.knob_settings import NO_SETTINGS, KnobSettings, check_prepared
from bench.protocol.plan import evaluation_context
from bench.protocol.spec import EvalCase, Protocol
from bench.run.checkpoints import checkpoints_for, set_up
from bench.run.crash import RunStopped, stop_reason
from bench.run.invoke import PhaseProgress, ProgressHook, first_user_clock, prepare_method, run_method
from bench.run.preload import start_preloads
from bench.run.prepare_ahead import PrepareAhead, ahead_of_ranking
from bench.run.prepare_step import ahead_setup
from bench.run.tracing import BenchTracing
from bench.run.workers import WorkerPool, ranking_pool
from bench.stats.method_summary import method_metrics
from state.context import Context, own_settings
from world.progress import Ender, OpenPhases, clocked, phase_seconds, reporting
from world.results_log import ResultsLog

if TYPE_CHECKING:
    from bench.run.checkpoints import Checkpoints
    from bench.run.remote import RemotePool


def run_benchmark(
    methods: Sequence[str],
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    on_progress: ProgressHook | None = None,
    on_phase: PhaseProgress | None = None,
    tracing: BenchTracing | None = None,
    workers: int = 1,
    on_phase_end: Ender | None = None,
    checkpoints: bool = False,
    remote: RemotePool | None = None,
    knobs: KnobSettings = NO_SETTINGS,
) -> dict[str, dict[str, Any]]:
    """Run every method (prepared by its hook, resuming from the log) and return metrics per method;
    `tracing` (bench/run/tracing.py) gives each user's run its tags, metadata and feedback; `workers` > 1
    ranks each method's users over that many processes (bench/run/workers.py), hooks still run here.

    Progress: `on_progress` after each user; `on_phase` for one-time work (world's and the prepare
    hooks'), and `on_phase_end(label)` once a phase's work is over even when it stopped short of
    its total: when the world says so, when a hook starts its next phase, and at the latest when the
    method's prepare, or its ranking, is over (no row is left waiting). `checkpoints`: each user's
    run is a LangGraph thread (bench/run/checkpoints.py). `remote`: each method is prepared and ranked
    on a LangGraph deployment instead (bench/run/remote.py). `knobs`: the `--set` values, applied to each
    method's context before its prepare step (bench/protocol/knob_settings.py)."""
    # cold_user / cold_start: every method trains and ranks in the scenario's world (bench/protocol/plan.py)
    context = evaluation_context(context, protocol, cases)
    start_preloads(methods, context)  # methods' one-time loading, in background threads
    threads = checkpoints_for(log.path.parent, protocol) if checkpoints else None
    if threads is not None:
        set_up(threads)  # PostgreSQL tables made here, before any worker process uses them
    results: dict[str, dict[str, Any]] = {}  # filled method by method: kept when one fails
    current: list[str] = []  # the method being prepared or ranked (steps ahead change the order)
    phases = OpenPhases(on_phase, on_phase_end) if on_phase else None
    try:
        pools = nullcontext(remote) if remote is not None else ranking_pool(workers, context.dataset)
        ahead_rows = OpenPhases(on_phase, on_phase_end) if on_phase else None  # not ended by the loop's
        steps = ahead_of_ranking(
            methods, cases, protocol, log, concurrency, lambda m: knobs.base(m, context),
            0 if remote is not None else workers, ahead_rows,
        )  # fmt: skip
        with reporting(phases), pools as pool, steps as ahead:  # + world's phases
            _run_methods(
                methods, cases, protocol, log, concurrency, context, on_progress, phases, tracing, pool,
                results, threads, knobs, ahead, current,
            )  # fmt: skip
            return {m: results[m] for m in methods}  # in the run's order, however they were ranked
    except Exception as error:  # the first failure stops the run; the finished methods are reported
        failed = next((m for m in current if m not in results), None)
        failed = failed or next((m for m in methods if m not in results), methods[-1])
        finished = {m: results[m] for m in methods if m in results}
        raise RunStopped(finished, failed, stop_reason(failed, error)) from error


def _run_methods(
    methods: Sequence[str],
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    on_progress: ProgressHook | None,
    phases: OpenPhases | None,
    tracing: BenchTracing | None,
    pool: WorkerPool | RemotePool | None,
    results: dict[str, dict[str, Any]],
    threads: Checkpoints | None = None,
    knobs: KnobSettings = NO_SETTINGS,
    ahead: PrepareAhead | None = None,
    current: list[str] | None = None,
) -> dict[str, dict[str, Any]]:
    """`run_benchmark`'s loop: each method prepared here (or taken from its step `ahead`, as the
    steps finish), ranked here or by `pool`'s workers; each finished method's metrics go into
    `results` (returned), its name into `current` while it runs. The phases a stage (prepare,
    ranking) left open are ended with it."""
    wanted = {case.user_id for case in cases}
    for method in ahead.ranking_order(methods) if ahead else methods:
        if current is not None:
            current[:] = [method]
        started, first = time.perf_counter(), list[float]()  # setup: until the first user is ranked
        cpu = time.process_time()
        hook_phases, hook_clock = clocked(phases.one_at_a_time() if phases else None)
        prepare = getattr(pool, "prepare", prepare_method)  # a deployment prepares on its own servers
        given = knobs.for_method(method)  # --set: in the method's context before anything reads it
        step = ahead.result(method) if ahead else None
        if step is None:
            base = knobs.base(method, context)
            prepared = prepare(method, cases, protocol, log, concurrency, base, hook_phases)
        else:
            prepared = step.prepared
        check_prepared(method, knobs, prepared.context)
        if phases:
            phases.end_all()
        prepare_seconds, prepare_cpu = time.perf_counter() - started, time.process_time() - cpu
        progress = first_user_clock(started, first, on_progress)
        if on_progress:  # the method's row starts now, after its prepare rows (e.g. Stage W)
            on_progress(method, 0)
        if pool is not None:  # --workers N: users sharded over processes (bench/run/workers.py)
            pool.rank(method, cases, protocol, log, concurrency, prepared.context, progress, phases, threads)
        else:
            asyncio.run(
                run_method(
                    method, cases, protocol, log, concurrency, prepared.context, progress, tracing, threads
                )
            )
        if phases:
            phases.end_all()
        records = [r for u, r in log.done(method).items() if u in wanted]
        results[method] = method_metrics(records)
        results[method].update(prepared.metrics)
        results[method]["settings"] = own_settings(prepared.context)
        if given:
            results[method]["set"] = given
        results[method]["call_plan"] = call_plan_entry(method, prepared.context, protocol.candidates)
        if step is None:
            setup = {"prepare": prepare_seconds, "prepare_cpu": prepare_cpu, "prepared": "in order"}
            # world.progress rows in this method, then the prepare hook's own phases ("<method> · X": X)
            work = phase_seconds(since=started)
            work.update((label.removeprefix(f"{method} · "), s) for label, s in hook_clock.seconds().items())
            setup["one_time_work"] = work
        else:
            setup = {**ahead_setup(step), "waited": ahead.waited[method]}  # type: ignore[union-attr]
        setup["to_first_user"] = first[0] if first else None
        results[method]["setup_seconds"] = setup
    return results
