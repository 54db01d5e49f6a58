"""`recgraph bench --workers N`: the methods' prepare steps run ahead, N at a time, each in a
spawned process of its own, while the parent ranks the methods already prepared.

A method's prepare step (bench/run/invoke.py `prepare_method`: its item vectors, then its hook:
training, Stage W, pools, planners) is single-threaded work that does not depend on another
method's, with two exceptions the plan below keeps:

- Methods of one prepare family (a method and its ablations: `MethodSpec.prepare_family`, by
  default the hook they share) read or extend what the family's earlier steps wrote (AMEM4Rec's
  shared rounds, the learned planners' trajectories), so a family's steps run one after another,
  in the run's order.
- The router's variants run their prerequisites' hooks (graphs/router/prepare.py) on files those
  methods own (MemRec's memory, AMEM4Rec's pool, the trained baselines): a router step waits for
  the steps of the prerequisites the run also benches, and then only reads their files.

Each step runs the same code, single-threaded as in the parent, so the weights, pools and
memories are the ones a `--workers 1` run makes (tests/bench/run/test_prepare_ahead.py). A step
sends its progress rows to the parent, which shows them beside the ranking; its result (the
prepared context, the hook's metrics, each phase's seconds, the step's wall and CPU seconds)
comes back with it, and the parent ranks the method with that context as it would have after
preparing it itself. Ready steps start in an order that serves the most waiting steps first.
A failed step fails its method (and the steps waiting for it); the parent meets the failure
when it reaches that method, as in a serial run.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from bench.protocol.spec import EvalCase, Protocol
from bench.run.prepare_plan import ITEM_VECTORS, PrepareStep, plan_steps
from bench.run.workers import llm_cache_path
from graphs.hooks import Prepared
from graphs.registry import METHODS
from state.context import Context
from world.progress import OpenPhases, clocked, phase_seconds, reporting
from world.results_log import ResultsLog

_RELAY: Queue | None = None
"""The parent's queue for progress rows, in a prepare process (set by `_start_process`)."""


@dataclass(frozen=True)
class RankedUsers:
    """The results log as a prepare step sees it: where the run's folder is, and the users of the
    step's method already ranked (read by the parent before the step started)."""

    path: Path
    """results.jsonl (its folder is the run's work folder)."""
    ranked: frozenset[str]
    """Users of the method already in the log."""

    def done(self, method: str) -> dict[str, None]:
        """The users already ranked, as `ResultsLog.done` gives them."""
        return dict.fromkeys(self.ranked)


@dataclass(frozen=True)
class StepResult:
    """What a prepare step sends back to the parent."""

    prepared: Prepared
    """The hook's result: the context to rank with and its metrics."""
    one_time_work: dict[str, float]
    """Seconds per phase: the world's (item vectors, indexes), then the hook's own."""
    wall_seconds: float
    """The step's wall-clock seconds in its process."""
    cpu_seconds: float
    """The CPU seconds its process spent on it (every thread)."""


@dataclass
class PrepareAhead:
    """The run's prepare steps, started in `workers` processes as their dependencies finish."""

    steps: dict[str, PrepareStep]
    """Method -> its step (with what it waits for), from bench/run/prepare_plan.py."""
    workers: int
    """Steps at most running at once (`--workers`)."""
    phases: OpenPhases | None = None
    """Where the steps' progress rows go (their own open labels, ended when a step is over)."""
    futures: dict[str, Future] = field(default_factory=dict)
    """Method -> its step's future, once started."""

    def __post_init__(self) -> None:
        """Start the processes and the steps that wait for nothing."""
        spawn = multiprocessing.get_context("spawn")
        self._relay: Queue = spawn.Queue()
        self._lock = threading.RLock()  # a done callback may run inside `_start_ready`
        self._pids: list[int] = []
        self._pool = ProcessPoolExecutor(
            self.workers,
            mp_context=spawn,
            initializer=_start_process,
            initargs=(self._relay, os.getpid(), llm_cache_path()),
        )
        self._closed = threading.Event()
        self._listener = threading.Thread(target=self._listen, name="prepare-ahead-rows", daemon=True)
        self._listener.start()
        self._start_ready()

    def _start_ready(self) -> None:
        """Start ready steps (their dependencies finished) while fewer than `workers` run, the
        most waited-for first, so a later-ready step that many wait for is not queued behind the
        others; a step whose dependency failed fails with it."""
        with self._lock:
            for step in sorted(self.steps.values(), key=lambda s: (-s.waiting, s.order)):
                running = sum(not f.done() for f in self.futures.values())
                if running >= self.workers:
                    return
                if step.method in self.futures or any(d not in self.futures for d in step.after):
                    continue
                befores = [self.futures[d] for d in step.after]
                if not all(f.done() for f in befores):
                    continue
                failed = next((f for f in befores if f.cancelled() or f.exception() is not None), None)
                if failed is not None:
                    self.futures[step.method] = failed
                    continue
                try:
                    future = self._pool.submit(run_step, step)
                except RuntimeError as error:  # the pool broke (a process was killed): no step runs
                    future = Future()
                    future.set_exception(error)
                self.futures[step.method] = future
                future.add_done_callback(lambda _: self._start_ready())

    def result(self, method: str) -> StepResult | None:
        """`method`'s step result, waiting for it (None: the method has no step ahead, and is
        prepared by the parent once the run's item vectors are, when it reads them); re-raises the
        step's failure. Its progress rows are ended here."""
        if method not in self.steps:
            if METHODS[method].item_vectors and ITEM_VECTORS in self.steps:
                self.result(ITEM_VECTORS)
            return None
        while method not in self.futures:  # its dependencies are still running
            time.sleep(0.05)
        try:
            return self.futures[method].result()
        finally:
            self._end_rows(method)

    def close(self) -> None:
        """Stop the processes: steps not started are dropped, running ones are terminated (each
        step's files are written whole or not at all, and a rerun resumes them)."""
        self._closed.set()
        for future in self.futures.values():
            future.cancel()
        for pid in self._pids:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                continue
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._relay.cancel_join_thread()

    def _listen(self) -> None:
        """Pass the steps' progress rows on to `phases` until the run is over."""
        while not self._closed.is_set():
            try:
                kind, payload = self._relay.get(timeout=0.2)
            except queue.Empty:
                continue
            if kind == "pid":
                self._pids.append(payload)
            elif self.phases is not None and kind == "phase":
                self.phases(*payload)
            elif kind == "end":  # after the step's last row: rows it left open end with it
                self._end_rows(payload)

    def _end_rows(self, method: str) -> None:
        """End the rows `method`'s step left open (e.g. a phase that stopped short of its total)."""
        if self.phases is not None:
            self.phases.end_all(prefix=f"{method} · ")


def _start_process(relay: Queue, parent_pid: int, llm_cache: str | None) -> None:
    """A prepare process's start: remember the parent's queue, tell it our pid, use the parent's
    LLM cache (`--llm-cache`) when it has one, and exit when the parent is gone; Ctrl-C is the
    parent's to handle."""
    from bench.run.worker_process import watch_parent

    if llm_cache:
        from agents.backends import enable_llm_cache

        enable_llm_cache(llm_cache)
    global _RELAY
    _RELAY = relay
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(parent_pid)
    relay.put(("pid", os.getpid()))


def _relay_row(method: str) -> Callable[[str, int, int], None]:
    """A reporter sending `method`'s rows to the parent, each label named after the method."""
    prefix = f"{method} · "

    def send(label: str, done: int, total: int) -> None:
        if _RELAY is not None:
            named = label if label.startswith(prefix) else prefix + label
            _RELAY.put(("phase", (named, done, total)))

    return send


def _embed_items(step: PrepareStep) -> Prepared:
    """The `ITEM_VECTORS` step: every evaluated user's visible history and candidates embedded."""
    from bench.run.item_prefetch import case_item_rows
    from world.environment import get_environment

    env = get_environment(step.context.dataset)
    env.item_vectors().ensure(case_item_rows(env, step.cases, step.protocol.scenario))
    return Prepared(step.context)


def run_step(step: PrepareStep) -> StepResult:
    """Prepare `step.method` in this process as the parent would (bench/run/invoke.py
    `prepare_method`), timing it; its failure goes back to the parent whole or as one line."""
    from bench.run.invoke import prepare_method
    from bench.run.worker_process import portable

    started, cpu = time.perf_counter(), time.process_time()
    send = _relay_row(step.method)
    hook_phases, hook_clock = clocked(send)
    try:
        with reporting(send):
            if step.method == ITEM_VECTORS:
                prepared = _embed_items(step)
            else:
                log = RankedUsers(step.log_path, step.ranked)
                prepared = prepare_method(
                    step.method, step.cases, step.protocol, log, step.concurrency, step.context, hook_phases  # type: ignore[arg-type]
                )
    except BaseException as error:
        raise portable(error) from None
    finally:
        if _RELAY is not None:
            _RELAY.put(("end", step.method))
    work = phase_seconds(since=started)
    prefix = f"{step.method} · "
    work.update((label.removeprefix(prefix), s) for label, s in hook_clock.seconds().items())
    return StepResult(prepared, work, time.perf_counter() - started, time.process_time() - cpu)


@contextmanager
def ahead_of_ranking(
    methods: Sequence[str],
    cases: Sequence[EvalCase],
    protocol: Protocol,
    log: ResultsLog,
    concurrency: int,
    contexts: Callable[[str], Context],
    workers: int,
    phases: OpenPhases | None,
) -> Iterator[PrepareAhead | None]:
    """The run's prepare steps started ahead, and stopped when the block ends (None when `workers`
    < 2 or no method has a `prepare` hook). `contexts(method)`: the context its prepare starts from
    (with the run's `--set` knobs)."""
    if workers < 2:
        yield None
        return
    ranked = lambda method: frozenset(log.done(method))  # noqa: E731
    steps = plan_steps(methods, cases, protocol, log.path, ranked, concurrency, contexts)
    if not steps:
        yield None
        return
    ahead = PrepareAhead(steps, workers, phases)
    try:
        yield ahead
    finally:
        ahead.close()


def ahead_setup(result: StepResult) -> dict[str, Any]:
    """The `setup_seconds` figures of a step prepared ahead (the parent adds what it waited)."""
    return {
        "prepare": result.wall_seconds,
        "prepare_cpu": result.cpu_seconds,
        "prepared": "ahead",
        "one_time_work": result.one_time_work,
    }
