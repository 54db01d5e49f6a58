"""`recgraph bench --workers N`: each method's users sharded over N processes.

For when one process's CPU is the limit (short latency and high concurrency, e.g. a local vLLM or
llama.cpp server). Design choices:

- Processes from `multiprocessing`'s spawn context, not subprocesses of the CLI: the parent hands
  each worker the method's *prepared* `Context` (a picklable dataclass) after the method's `prepare`
  hook ran once in the parent, so training and Stage W warm-up happen once and stay deterministic;
  workers reload what the hook left on disk (memory graph files, pools) through that context.
  Spawn, not fork: a fork would copy the parent's event-loop, HTTP-client and SQLite state.
- The workers live for the whole run (started before the first method is prepared, so their
  imports and dataset load overlap the parent's first hook) and rank one method at a time.
- The parent is the only writer of results.jsonl: workers send each finished user's record over a
  queue and the parent appends it (flushed and fsynced) as today, so there is no file lock, no part
  file to merge, and a kill loses only users in flight; the rerun resumes from the log, with any
  number of workers. The same messages feed each method's progress bar.
- `--concurrency` stays the number of users in flight in total, split over the workers; shards
  are round-robin over the users still to run. Metrics do not depend on the split: every per-user
  result depends on (seed, user) only and metrics are averaged in user order.
- With `--llm sim` every worker talks to the one simulator the parent started; its fault draws
  depend on each request's bytes, not on arrival order, so faults match `--workers 1` too.
- A failure in a worker (e.g. the circuit breaker) stops the other workers cleanly (a stop flag
  they poll, no kill mid-write) and is re-raised in the parent with the worker's traceback as a
  note; a worker that dies is reported in one line, and what finished stays for the rerun.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bench.protocol.spec import EvalCase, Protocol
from bench.run.checkpoints import Checkpoints
from bench.run.worker_process import Shard, WorkerSetup, serve
from state.context import Context
from world.errors import ProtocolError, RecgraphError
from world.progress import OpenPhases
from world.results_log import ResultsLog

POLL_SECONDS = 0.5
"""How long the parent waits for a message before it checks that its workers are alive."""
STOP_SECONDS = 60.0
"""How long stopped workers may take to report the users they finished."""
JOIN_SECONDS = 10.0
"""How long a worker may take to exit after the run before it is terminated."""


class WorkerStopped(RecgraphError):
    """A bench worker process ended without finishing its users (killed, out of memory)."""


def check_workers(workers: int, concurrency: int, trace: bool = False) -> None:
    """Refuse a `--workers` value that cannot work, before anything runs."""
    if workers < 1:
        raise ProtocolError(f"--workers must be at least 1, got {workers}")
    if workers > concurrency:
        raise ProtocolError(
            f"--workers {workers} needs --concurrency of at least {workers} (users in flight in "
            f"total, shared among the workers), got {concurrency}"
        )
    if workers > 1 and trace:
        raise ProtocolError("--trace runs in one process: use it with --workers 1")


def shards(cases: Sequence[EvalCase], workers: int) -> list[list[EvalCase]]:
    """Round-robin shards of `cases`, one per worker (some empty when there are fewer cases)."""
    return [list(cases[i::workers]) for i in range(workers)]


def concurrency_shares(concurrency: int, workers: int) -> list[int]:
    """`concurrency` split over the workers as evenly as possible (each at least 1)."""
    return [max(1, concurrency // workers + (i < concurrency % workers)) for i in range(workers)]


def llm_cache_path() -> str | None:
    """The SQLite file of LangChain's global LLM cache in this process (`--llm-cache`), if any."""
    from langchain_core.globals import get_llm_cache

    engine = getattr(get_llm_cache(), "engine", None)
    return getattr(getattr(engine, "url", None), "database", None)


class WorkerPool:
    """N spawned worker processes (bench/run/worker_process.py) ranking one method at a time."""

    def __init__(self, workers: int, dataset: str) -> None:
        """Start `workers` processes that load `dataset` while the parent goes on."""
        spawn = multiprocessing.get_context("spawn")
        self.out = spawn.Queue()
        self.stop = spawn.Event()
        self.tasks = [spawn.Queue() for _ in range(workers)]
        self.processes = []
        cache = llm_cache_path()
        for index, tasks in enumerate(self.tasks):
            setup = WorkerSetup(index=index, dataset=dataset, llm_cache=cache, parent_pid=os.getpid())
            process = spawn.Process(
                target=serve, args=(setup, tasks, self.out, self.stop), name=f"recgraph-bench-worker-{index}"
            )
            process.start()
            self.processes.append(process)

    def rank(
        self,
        method: str,
        cases: Sequence[EvalCase],
        protocol: Protocol,
        log: ResultsLog,
        concurrency: int,
        context: Context,
        on_progress: Callable[[str, int], None] | None = None,
        phases: OpenPhases | None = None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        """Rank every case of `method` not yet in `log` over the workers, appending each record to
        `log` as it arrives; returns when all are logged, raises the first failure. One-time work
        inside a worker goes to `phases` as "<label> · worker <i>"; with `checkpoints` the workers run
        each user on its thread (bench/run/checkpoints.py)."""
        finished = log.done(method)
        pending = [case for case in cases if case.user_id not in finished]
        busy: set[int] = set()
        shares = concurrency_shares(concurrency, len(self.processes))
        for index, shard in enumerate(shards(pending, len(self.processes))):
            if shard:
                self.tasks[index].put(Shard(method, shard, protocol, context, shares[index], checkpoints))
                busy.add(index)
        count = 0

        def record(message: tuple[str, int, Any]) -> BaseException | None:
            nonlocal count
            kind, index, payload = message
            if kind == "record":
                log.append(payload)
                count += 1
                if on_progress:
                    on_progress(method, count)
            elif kind == "phase" and phases is not None:
                label, done, total = payload
                phases(f"{label} · worker {index}", done, total)
            elif kind == "phase_end" and phases is not None:
                phases.end(f"{payload} · worker {index}")
            elif kind in ("done", "error"):
                busy.discard(index)
            return payload if kind == "error" else None

        try:
            while busy:
                failure = self._next(busy, record, method, log)
                if failure is not None:
                    raise failure
        except BaseException:
            self._settle(busy, record)
            raise

    def _next(
        self,
        busy: set[int],
        record: Callable[[tuple[str, int, Any]], BaseException | None],
        method: str,
        log: ResultsLog,
    ) -> BaseException | None:
        """Handle one message (or, after `POLL_SECONDS` of silence, check that the busy workers
        live); returns a worker's failure, if that was the message."""
        try:
            message = self.out.get(timeout=POLL_SECONDS)
        except queue.Empty:
            message = None
        if message is not None:
            return record(message)
        dead = [i for i in sorted(busy) if self.processes[i].exitcode is not None]
        if not dead:
            return None
        while True:  # what the dead worker sent before it died is still worth logging
            try:
                record(self.out.get(timeout=POLL_SECONDS))
            except queue.Empty:
                break
        codes = ", ".join(f"worker {i} exit code {self.processes[i].exitcode}" for i in dead)
        return WorkerStopped(
            f"a bench worker stopped while ranking {method} ({codes}); the users finished so far "
            f"are in {log.path}: rerun the same command to resume"
        )

    def _settle(self, busy: set[int], record: Callable[[tuple[str, int, Any]], BaseException | None]) -> None:
        """After a failure: ask the busy workers to stop and log the users they still report."""
        self.stop.set()
        for _ in range(int(STOP_SECONDS / POLL_SECONDS)):
            busy.difference_update(i for i in list(busy) if self.processes[i].exitcode is not None)
            if not busy:
                return
            try:
                record(self.out.get(timeout=POLL_SECONDS))
            except queue.Empty:
                continue

    def close(self) -> None:
        """Let the workers exit (terminating any that do not within `JOIN_SECONDS`)."""
        for tasks, process in zip(self.tasks, self.processes, strict=True):
            if process.exitcode is None:
                tasks.put(None)
        for process in self.processes:
            process.join(JOIN_SECONDS)
            if process.exitcode is None:
                process.terminate()
                process.join(JOIN_SECONDS)
        self.out.cancel_join_thread()
        for tasks in self.tasks:
            tasks.cancel_join_thread()


@contextmanager
def ranking_pool(workers: int, dataset: str) -> Iterator[WorkerPool | None]:
    """A `WorkerPool` for the run when `workers` > 1 (closed after), else None (rank in-process)."""
    if workers <= 1:
        yield None
        return
    pool = WorkerPool(workers, dataset)
    try:
        yield pool
    finally:
        pool.close()
