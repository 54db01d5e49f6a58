"""The batch runner: every method over the same cases, resumable, any concurrency."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import Runnable, RunnableConfig

from bench.checkpoints import ainvoke_on_thread, async_saver, checkpoints_for, set_up
from bench.crash import MethodCrashed, RunStopped, is_crash, stop_reason
from bench.item_prefetch import prefetch_item_vectors
from bench.knob_settings import NO_SETTINGS, KnobSettings, check_prepared
from bench.method_summary import method_metrics
from bench.planned_calls import call_plan_entry
from bench.preload import start_preloads, wait_preload
from bench.protocol import EvalCase, Protocol, evaluation_context
from bench.records import result_record
from bench.tracing import BenchTracing
from graphs.concurrency import run_concurrently
from graphs.hooks import Prepared, PrepareRequest
from graphs.registry import get_graph, hook, method_context
from graphs.tracing import untraced
from state.context import Context, own_settings
from world.environment import get_environment
from world.progress import Ender, OpenPhases, clocked, phase_seconds, reporting
from world.results_log import ResultsLog

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from bench.checkpoints import Checkpoints
    from bench.remote import RemotePool
    from bench.workers import WorkerPool

ProgressHook = Callable[[str, int], None]
"""Called as (method, users finished so far in this run) after each user."""
PhaseProgress = Callable[[str, int, int], None]
"""Called as (phase label, done, total) while one-time work runs: the world's (item vectors, indexes:
world/progress.py) and a method's `prepare` hook's phases, which run one after another."""


def timed_invocation(
    method: str,
    scenario: str,
    context: Context,
    configure: Callable[[EvalCase], RunnableConfig] | None = None,
    threads: tuple[Checkpoints, BaseCheckpointSaver] | None = None,
) -> Runnable:
    """A runnable mapping an `EvalCase` to (case, graph output, seconds the invocation took).

    Batched with `max_concurrency`, it is how both `bench` and `bench perf` run a method. It opens
    no trace run of its own: each graph invocation is a root run, configured by `configure(case)`.
    With `threads` (where, open saver) each user runs on its checkpointed thread (bench/checkpoints.py).
    """
    graph = get_graph(method)
    if threads is not None:
        graph = graph.copy(update={"checkpointer": threads[1]})

    async def invoke(case: EvalCase) -> tuple[EvalCase, dict[str, Any], float]:
        config = configure(case) if configure else None
        started = time.perf_counter()
        try:
            output = await ainvoke_on_thread(graph, case.request(scenario), config, context, threads, method)
        except Exception as error:  # a bug gets its one line naming the user (bench/crash.py)
            if is_crash(error):
                raise MethodCrashed.of(method, case.user_id, error) from error
            raise
        return case, output, time.perf_counter() - started

    return untraced(invoke, name=f"bench:{method}")


async def run_method(
    method: str,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    on_progress: ProgressHook | None = None,
    tracing: BenchTracing | None = None,
    checkpoints: Checkpoints | None = None,
) -> None:
    """Run `method` on every case not already in the log, appending each as it finishes (and
    attaching its metrics to its trace as feedback when `tracing` traces); with `checkpoints` each
    user's run is a checkpointed thread, resumed where an earlier run stopped (bench/checkpoints.py).

    `concurrency` workers take cases from one queue. When a user fails (e.g. the LLM endpoint is
    unreachable) the other workers are cancelled and awaited before the error propagates: the run
    stops at once, cleanly, and every user logged so far stays for the rerun to resume from.
    """
    finished = log.done(method)
    pending = [case for case in cases if case.user_id not in finished]
    count = 0
    tracing = tracing or BenchTracing(protocol)

    def scored(timed_output: tuple[EvalCase, dict[str, Any], float]) -> None:
        nonlocal count
        case, output, seconds = timed_output
        record = result_record(method, case, output, seconds, context)
        log.append(record)
        tracing.scored(record)
        count += 1
        if on_progress:
            on_progress(method, count)

    async with async_saver(checkpoints) if checkpoints else nullcontext() as saver:
        threads = (checkpoints, saver) if checkpoints else None
        timed = timed_invocation(method, protocol.scenario, context, partial(tracing.config, method), threads)
        await run_concurrently(pending, timed.ainvoke, scored, concurrency)


def prepare_request(
    method: str,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    on_phase: PhaseProgress | None = None,
) -> PrepareRequest:
    """What a method's prepare hook (in-process or on a deployment) is told about the run: its users,
    protocol, work folder (`--out`), concurrency, context and the users already ranked."""
    return PrepareRequest(
        method=method,
        users=[case.user_id for case in cases],
        scenario=protocol.scenario,
        protocol=protocol.as_dict(),
        work_dir=log.path.parent,
        concurrency=concurrency,
        context=context,
        ranked=frozenset(log.done(method)),
        on_progress=on_phase,
    )


def prepare_method(
    method: str,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    on_phase: PhaseProgress | None = None,
) -> Prepared:
    """The method's context for ranking: its overrides applied, the item vectors its users still to
    rank will read embedded (bench/item_prefetch.py), then its `prepare` hook (training or warm-up)
    run when it declares one; `on_phase` gets the hook's progress (an `OpenPhases` reporter's
    `one_at_a_time()` ends each of its phases when the next starts)."""
    ctx = method_context(method, context)
    pending = [case for case in cases if case.user_id not in log.done(method)]
    prefetch_item_vectors(method, get_environment(ctx.dataset), pending, protocol.scenario)
    prepare = hook(method, "prepare")
    if prepare is None:
        return Prepared(ctx)
    request = prepare_request(method, cases, protocol, log, concurrency, ctx, on_phase)
    try:
        wait_preload(method, context)  # started with the run (bench/preload.py)
        return prepare(request)
    except Exception as error:
        if is_crash(error):
            raise MethodCrashed.of(method, None, error, "preparing") from error
        raise


def first_user_clock(started: float, first: list[float], hook: ProgressHook | None) -> ProgressHook:
    """`hook`, also noting in `first` the seconds from `started` until the first user is ranked."""

    def progress(method: str, count: int) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if hook:
            hook(method, count)

    return progress


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
    `tracing` (bench/tracing.py) gives each user's run its tags, metadata and feedback; `workers` > 1
    ranks each method's users over that many processes (bench/workers.py), hooks still run here.

    Progress: `on_progress` after each user; `on_phase` for one-time work (world's and the prepare
    hooks'), and `on_phase_end(label)` once a phase's work is over even when it stopped short of
    its total: when the world says so, when a hook starts its next phase, and at the latest when the
    method's prepare, or its ranking, is over (no row is left waiting). `checkpoints`: each user's
    run is a LangGraph thread (bench/checkpoints.py). `remote`: each method is prepared and ranked
    on a LangGraph deployment instead (bench/remote.py). `knobs`: the `--set` values, applied to each
    method's context before its prepare step (bench/knob_settings.py)."""
    from bench.workers import ranking_pool  # here: bench.workers builds on this module

    # cold_user / cold_start: every method trains and ranks in the scenario's world (bench/protocol.py)
    context = evaluation_context(context, protocol, cases)
    start_preloads(methods, context)  # methods' one-time loading, in background threads
    threads = checkpoints_for(log.path.parent, protocol) if checkpoints else None
    if threads is not None:
        set_up(threads)  # PostgreSQL tables made here, before any worker process uses them
    results: dict[str, dict[str, Any]] = {}  # filled method by method: kept when one fails
    phases = OpenPhases(on_phase, on_phase_end) if on_phase else None
    try:
        pools = nullcontext(remote) if remote is not None else ranking_pool(workers, context.dataset)
        with reporting(phases), pools as pool:  # + world's phases
            return _run_methods(
                methods, cases, protocol, log, concurrency, context, on_progress, phases, tracing, pool,
                results, threads, knobs,
            )  # fmt: skip
    except Exception as error:  # the first failure stops the run; the finished methods are reported
        failed = next((m for m in methods if m not in results), methods[-1])
        raise RunStopped(results, failed, stop_reason(failed, error)) from error


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
) -> dict[str, dict[str, Any]]:
    """`run_benchmark`'s loop: each method prepared here, ranked here or by `pool`'s workers; each
    finished method's metrics go into `results` (returned). The phases a stage (prepare, ranking)
    left open are ended with it."""
    wanted = {case.user_id for case in cases}
    for method in methods:
        started, first = time.perf_counter(), list[float]()  # setup: until the first user is ranked
        hook_phases, hook_clock = clocked(phases.one_at_a_time() if phases else None)
        prepare = getattr(pool, "prepare", prepare_method)  # a deployment prepares on its own servers
        given = knobs.for_method(method)  # --set: in the method's context before anything reads it
        base = knobs.apply(method, method_context(method, context)) if given else context
        prepared = prepare(method, cases, protocol, log, concurrency, base, hook_phases)
        check_prepared(method, knobs, prepared.context)
        if phases:
            phases.end_all()
        prepare_seconds = time.perf_counter() - started
        progress = first_user_clock(started, first, on_progress)
        if on_progress:  # the method's row starts now, after its prepare rows (e.g. Stage W)
            on_progress(method, 0)
        if pool is not None:  # --workers N: users sharded over processes (bench/workers.py)
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
        setup = {"prepare": prepare_seconds, "to_first_user": first[0] if first else None}
        # world.progress rows in this method, then the prepare hook's own phases ("<method> · X": X)
        work = phase_seconds(since=started)
        work.update((label.removeprefix(f"{method} · "), s) for label, s in hook_clock.seconds().items())
        setup["one_time_work"] = work
        results[method]["setup_seconds"] = setup
    return results
