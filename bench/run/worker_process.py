"""One process of `recgraph bench --workers N`: it ranks the shards of users the parent sends it and
streams every finished user's record back; the parent (bench/run/workers.py) is the only writer of
results.jsonl, so appends need no lock and a half-written line can only come from the parent.

A worker has its own event loop, its own HTTP clients (agents build them per process) and its own
circuit breaker; it reads whatever a method's `prepare` hook left on disk (memory graphs, pools)
through the prepared `Context` it is sent, and never runs a hook itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import pickle
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Event
from typing import Any

from bench.protocol.spec import EvalCase, Protocol
from bench.run.checkpoints import Checkpoints
from bench.run.invoke import run_method
from state.context import Context
from world.errors import RecgraphError
from world.progress import reporting

STOP_POLL_SECONDS = 0.1
"""How often a ranking worker looks at the parent's stop flag."""
PARENT_POLL_SECONDS = 1.0
"""How often a worker checks that its parent is still alive (it exits when the parent is gone)."""


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker needs before its first shard."""

    index: int
    """The worker's number (0..N-1), in every message it sends."""
    dataset: str
    """The run's dataset, loaded at start (while the parent runs the first `prepare` hook)."""
    llm_cache: str | None
    """The SQLite file of the parent's LLM cache (`--llm-cache`), or None."""
    parent_pid: int
    """The parent's pid: the worker exits if it disappears (e.g. the parent was killed)."""


@dataclass(frozen=True)
class Shard:
    """One method's users for one worker."""

    method: str
    """The registered method."""
    cases: list[EvalCase]
    """The users to rank (none of them in the results log yet)."""
    protocol: Protocol
    """The run's protocol."""
    context: Context
    """The method's prepared context (what its `prepare` hook returned)."""
    concurrency: int
    """This worker's share of the run's users in flight."""
    checkpoints: Checkpoints | None = None
    """Where each user's run is checkpointed (bench/run/checkpoints.py), or None."""


class QueueLog:
    """The results log as `run_method` sees it inside a worker: each record goes to the parent."""

    def __init__(self, out: Queue, index: int) -> None:
        """Send records on `out`, tagged with the worker's `index`."""
        self.out, self.index = out, index

    def done(self, method: str) -> dict[str, dict[str, Any]]:
        """Nothing: the parent sends only users that are not in the log yet."""
        return {}

    def append(self, record: dict[str, Any]) -> None:
        """Send one finished user to the parent, which appends it durably."""
        self.out.put(("record", self.index, record))


class PhaseRelay:
    """The world's progress reports inside a worker (e.g. an index built on its first user), sent to
    the parent, whose display shows them as rows of their own (bench/run/workers.py)."""

    def __init__(self, out: Queue, index: int) -> None:
        """Send reports on `out`, tagged with the worker's `index`."""
        self.out, self.index = out, index

    def __call__(self, label: str, done: int, total: int) -> None:
        """`label` has done `done` of `total` in this worker."""
        self.out.put(("phase", self.index, (label, done, total)))

    def end(self, label: str) -> None:
        """`label`'s work is over in this worker."""
        self.out.put(("phase_end", self.index, label))


def portable(error: BaseException) -> BaseException:
    """`error` if it survives pickling (most of ours do), else a `RecgraphError` with its message;
    either way carrying the worker's traceback as a note."""
    note = "in a bench worker:\n" + "".join(traceback.format_exception(error)).rstrip()
    try:
        copy = pickle.loads(pickle.dumps(error))
    except Exception:  # an exception whose constructor takes other arguments than its message
        copy = RecgraphError(f"{type(error).__name__}: {error}")
    copy.add_note(note)
    return copy


def watch_parent(parent_pid: int) -> None:
    """Exit this process as soon as its parent is gone (a killed parent leaves no worker behind)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


async def rank_shard(shard: Shard, log: QueueLog, stop: Event) -> bool:
    """Rank the shard's users; False when the parent's stop flag cut it short (the users finished
    so far are sent; the others stay for a rerun)."""
    ranking = asyncio.create_task(
        run_method(  # type: ignore[arg-type]
            shard.method,
            shard.cases,
            shard.protocol,
            log,
            shard.concurrency,
            shard.context,
            checkpoints=shard.checkpoints,
        )
    )
    while not ranking.done():
        await asyncio.wait({ranking}, timeout=STOP_POLL_SECONDS)
        if stop.is_set() and not ranking.done():
            ranking.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ranking
            return False
    ranking.result()  # re-raises the shard's failure
    return True


def serve(setup: WorkerSetup, tasks: Queue, out: Queue, stop: Event) -> None:
    """A worker's life: load the dataset, then rank each shard from `tasks` until None arrives.

    Messages to the parent, each `(kind, worker index, payload)`: ("ready", i, None),
    ("record", i, record), ("phase", i, (label, done, total)), ("phase_end", i, label),
    ("done", i, finished: bool), ("error", i, exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle: it stops us
    watch_parent(setup.parent_pid)
    from langsmith.run_helpers import tracing_context

    try:
        if setup.llm_cache:
            from agents.backends import enable_llm_cache

            enable_llm_cache(setup.llm_cache)
        from world.environment import get_environment

        get_environment(setup.dataset)
    except BaseException as error:
        out.put(("error", setup.index, portable(error)))
        return
    out.put(("ready", setup.index, None))
    log = QueueLog(out, setup.index)
    with tracing_context(enabled=False), reporting(PhaseRelay(out, setup.index)):  # --trace: 1 process
        while (shard := tasks.get()) is not None:
            try:
                finished = asyncio.run(rank_shard(shard, log, stop))
            except BaseException as error:
                out.put(("error", setup.index, portable(error)))
                return
            out.put(("done", setup.index, finished))
