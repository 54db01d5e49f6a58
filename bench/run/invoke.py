"""One method on one process: a user's timed graph invocation, a method's ranking over its cases
(`run_method`, also what each worker process runs) and its prepare step; the progress hooks' types.
The batch runner over every method, local workers or a deployment is bench/run/runner.py."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.runnables import Runnable, RunnableConfig

from bench.protocol.spec import EvalCase, Protocol
from bench.run.checkpoints import ainvoke_on_thread, async_saver
from bench.run.crash import MethodCrashed, is_crash
from bench.run.item_prefetch import prefetch_item_vectors
from bench.run.preload import wait_preload
from bench.run.records import result_record
from bench.run.tracing import BenchTracing
from graphs.concurrency import run_concurrently
from graphs.hooks import AheadPart, Prepared, PrepareRequest
from graphs.registry import get_graph, hook, method_context
from graphs.tracing import untraced
from state.context import Context
from world.environment import get_environment
from world.results_log import ResultsLog

if TYPE_CHECKING:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from bench.run.checkpoints import Checkpoints

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
    With `threads` (where, open saver) each user runs on its checkpointed thread (bench/run/checkpoints.py).
    """
    graph = get_graph(method)
    if threads is not None:
        graph = graph.copy(update={"checkpointer": threads[1]})

    async def invoke(case: EvalCase) -> tuple[EvalCase, dict[str, Any], float]:
        config = configure(case) if configure else None
        started = time.perf_counter()
        try:
            output = await ainvoke_on_thread(graph, case.request(scenario), config, context, threads, method)
        except Exception as error:  # a bug gets its one line naming the user (bench/run/crash.py)
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
    user's run is a checkpointed thread, resumed where an earlier run stopped (bench/run/checkpoints.py).

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
    which: Literal["prepare", "prepare_ahead"] = "prepare",
) -> Prepared:
    """The method's context for ranking: its overrides applied, the item vectors its users still to
    rank will read embedded (bench/run/item_prefetch.py), then its `prepare` hook (training or warm-up)
    run when it declares one; `on_phase` gets the hook's progress (an `OpenPhases` reporter's
    `one_at_a_time()` ends each of its phases when the next starts). `which="prepare_ahead"` runs the
    method's `prepare_ahead` hook instead (a step of its own under `bench --workers`)."""
    ctx = method_context(method, context)
    pending = [case for case in cases if case.user_id not in log.done(method)]
    prefetch_item_vectors(method, get_environment(ctx.dataset), pending, protocol.scenario)
    prepare = hook(method, which)
    if prepare is None:
        return Prepared(ctx)
    request = prepare_request(method, cases, protocol, log, concurrency, ctx, on_phase)
    with preparing(method):
        wait_preload(method, context)  # started with the run (bench/run/preload.py)
        return prepare(request)


@contextmanager
def preparing(method: str) -> Iterator[None]:
    """A crash inside the block is `method`'s, while preparing (`MethodCrashed`); other errors pass."""
    try:
        yield
    except Exception as error:
        if is_crash(error):
            raise MethodCrashed.of(method, None, error, "preparing") from error
        raise


def run_ahead_part(
    method: str,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    context: Context,
    part: AheadPart,
) -> Prepared:
    """Do `part` of `method`'s `prepare_ahead` work (`MethodSpec.ahead_parts`) for the run, told it
    as the `prepare_ahead` step is (`prepare_request`, the method's overrides applied); a crash is the
    method's, while preparing (as in `prepare_method`)."""
    ctx = method_context(method, context)
    with preparing(method):
        part.run(prepare_request(method, cases, protocol, log, concurrency, ctx))
    return Prepared(ctx)


def first_user_clock(started: float, first: list[float], hook: ProgressHook | None) -> ProgressHook:
    """`hook`, also noting in `first` the seconds from `started` until the first user is ranked."""

    def progress(method: str, count: int) -> None:
        if not first:
            first.append(time.perf_counter() - started)
        if hook:
            hook(method, count)

    return progress
