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

What reads no other step's files is split off: a method's `prepare_ahead` hook (the learned
routers' planner training, in a training world of their own) is a step of its own that starts with
the run; the method's step waits for it and finds its checkpoint. The learned routers share their
trajectories, so the first one's ahead step goes first and the others then run side by side. That
first one's parts (`MethodSpec.ahead_parts`: the training world's SASRec, GRU4Rec and LightGCN, and
the memory vectors its MemoryNeighbourhood reads) are steps of their own before it, so that work runs
beside other steps and the planner's step starts in a fresh process that only reads what they made.

Each step runs the same code, single-threaded as in the parent, so the weights, pools and
memories are the ones a `--workers 1` run makes (tests/bench/run/test_prepare_ahead.py). A step
sends its progress rows to the parent, which shows them beside the ranking; its result (the
prepared context, the hook's metrics, each phase's seconds, the step's wall and CPU seconds)
comes back with it, and the parent ranks the method with that context as it would have after
preparing it itself. The parent ranks methods as they become ready: in the run's order, passing
over a method whose step is still running (a user's ranking depends on the seed and the user
only); results stay in the run's order. Ready steps start longest chain first: each step's
estimated CPU seconds (`MethodSpec.prepare_cost`) plus those of the longest chain of steps waiting
for it, so a long step that nothing waits for does not run alone at the end. A failed step fails
its method (and the steps waiting for it), and stops the run when the parent reaches that method.
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

from bench.protocol.spec import EvalCase, Protocol
from bench.run.prepare_plan import ITEM_VECTORS, PrepareStep, ahead_name, plan_steps, start_order
from bench.run.prepare_step import StepResult, run_step, start_process
from bench.run.workers import llm_cache_path
from graphs.registry import METHODS
from state.context import Context
from world.progress import OpenPhases
from world.results_log import ResultsLog

RETIRE_RSS_MB = 900.0
"""A step process still holding more than this after its step (and `world.heap.give_back`) is replaced
by a fresh one: what a heavy step leaves behind (torch's allocator, a training world's caches)
would otherwise add to the next step's peak, and one process's peak is the run's."""


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
    waited: dict[str, float] = field(default_factory=dict)
    """Method -> seconds the parent waited, with nothing ready to rank, before it took this one
    (written by `ranking_order`)."""

    def __post_init__(self) -> None:
        """Start the processes and the steps that wait for nothing."""
        self._spawn = multiprocessing.get_context("spawn")
        self._relay: Queue = self._spawn.Queue()
        self._lock = threading.RLock()  # a done callback may run inside `_start_ready`
        self._pids: list[int] = []
        self._slots = [self._new_process() for _ in range(self.workers)]
        self._busy: dict[int, str] = {}  # slot -> the step running there
        self._used: set[int] = set()  # slots whose process has run a step
        self._retired: list[ProcessPoolExecutor] = []
        self._closed = threading.Event()  # set by `close`: no step starts after it
        self._stopped = threading.Event()  # set once every process is gone: the listener ends
        self._listener = threading.Thread(target=self._listen, name="prepare-ahead-rows", daemon=True)
        self._listener.start()
        self._start_ready()

    def _new_process(self) -> ProcessPoolExecutor:
        """One step process (a pool of one: it runs steps one after another until retired)."""
        return ProcessPoolExecutor(
            1, mp_context=self._spawn, initializer=start_process,
            initargs=(self._relay, os.getpid(), llm_cache_path()),
        )  # fmt: skip

    def _step_done(self, slot: int, future: Future) -> None:
        """Free `slot`, retiring its process when the step left it holding more than
        `RETIRE_RSS_MB` (or broken), then start what became ready (a step with
        `PrepareStep.fresh_process` retires a used process first)."""
        with self._lock:
            del self._busy[slot]
            failed = future.cancelled() or future.exception() is not None
            if not self._closed.is_set() and (failed or future.result().process_rss_mb > RETIRE_RSS_MB):
                self._retire(slot)
        self._start_ready()

    def _retire(self, slot: int) -> None:
        """Replace `slot`'s process by a fresh one (the old one exits once idle)."""
        self._retired.append(self._slots[slot])
        self._retired[-1].shutdown(wait=False)
        self._slots[slot] = self._new_process()
        self._used.discard(slot)

    def _start_ready(self) -> None:
        """Start ready steps (their dependencies finished) while fewer than `workers` run, the
        longest chain of estimated work first (`PrepareStep.chain_cost`; in `make bench`'s run,
        the learned router's training-world parts, the item vectors and then its planner training,
        split off to start early), then in the run's order; a step whose dependency failed fails
        with it."""
        with self._lock:
            for step in start_order(self.steps.values()):
                if len(self._busy) >= self.workers or self._closed.is_set():
                    return
                if step.name in self.futures or any(d not in self.futures for d in step.after):
                    continue
                befores = [self.futures[d] for d in step.after]
                if not all(f.done() for f in befores):
                    continue
                failed = next((f for f in befores if f.cancelled() or f.exception() is not None), None)
                if failed is not None:
                    self.futures[step.name] = failed
                    continue
                slot = next(i for i in range(self.workers) if i not in self._busy)
                if step.fresh_process and slot in self._used:
                    self._retire(slot)
                self._used.add(slot)
                try:
                    future = self._slots[slot].submit(run_step, step)
                except RuntimeError as error:  # the pool broke (a process was killed): no step runs
                    future = Future()
                    future.set_exception(error)
                    self.futures[step.name] = future
                    continue
                self._busy[slot] = step.name
                self.futures[step.name] = future
                future.add_done_callback(lambda done, slot=slot: self._step_done(slot, done))

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
        parts = self._parts(method)
        try:
            result = self.futures[method].result()
            ahead = self.futures.get(ahead_name(method))
            if ahead is None:
                return result
            made = ahead.result()
            for part in parts:
                made = made.after(self.futures[part.name].result())
            return result.after(made)
        finally:
            for name in (method, *(part.row_prefix for part in parts)):
                self._end_rows(name)  # a killed step's rows never got its "end"

    def _parts(self, method: str) -> list[PrepareStep]:
        """The steps doing parts of `method`'s `prepare_ahead` work (`PrepareStep.part`)."""
        return [step for step in self.steps.values() if step.part is not None and step.method == method]

    def ranking_order(self, methods: Sequence[str]) -> Iterator[str]:
        """`methods` in the order the parent can rank them: the run's order, except that a method
        whose step (or the item vectors it reads) is still running is passed over until it is done
        (a user's ranking depends on the seed and the user only, never on the order of methods)."""
        waiting = list(methods)
        while waiting:
            since = time.perf_counter()
            while (ready := next((m for m in waiting if self._ready(m)), None)) is None:
                time.sleep(0.1)
            self.waited[ready] = time.perf_counter() - since
            waiting.remove(ready)
            yield ready

    def _ready(self, method: str) -> bool:
        """Whether `method`'s step and the item-vector step it waits for are over (or absent)."""
        needs = [method] if method in self.steps else []
        if METHODS[method].item_vectors and ITEM_VECTORS in self.steps:
            needs.append(ITEM_VECTORS)
        return all(m in self.futures and self.futures[m].done() for m in needs)

    def close(self) -> None:
        """Stop the processes: steps not started are dropped, running ones are terminated (each
        step's files are written whole or not at all, and a rerun resumes them). Idle processes
        exit on their own: killing one that holds the pool's queue lock would leak it."""
        self._closed.set()  # no step starts from here on
        for future in self.futures.values():
            future.cancel()
        if any(not future.done() for future in self.futures.values()):
            for pid in self._pids:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    continue
        with self._lock:
            processes = [*self._slots, *self._retired]
        for process in processes:
            process.shutdown(wait=True, cancel_futures=True)
        self._stopped.set()
        self._listener.join()
        self._relay.close()
        self._relay.join_thread()

    def _listen(self) -> None:
        """Pass the steps' progress rows on to `phases` until the run is over."""
        while not self._stopped.is_set():
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

    def _end_rows(self, name: str) -> None:
        """End the rows a step named by `name` (its `row_prefix`) left open (e.g. a phase that stopped
        short of its total)."""
        if self.phases is not None:
            self.phases.end_all(prefix=f"{name} · ")


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
