"""Stage W's background writer: a durable queue of propagation jobs applied with optimistic concurrency.

`submit` persists the job in the memory's store (table `jobs` of the SQLite file, or `memrec_jobs`
in the shared PostgreSQL database) before returning, so a killed process loses no job. A worker
reads the nodes' (text, version), runs the job's pure `compute`, and compare-and-sets every node
plus marks the job done in ONE transaction: a version conflict rolls the whole job back and it is
recomputed from fresh memories (bounded retries, then once more with the nodes locked, which cannot
conflict); the conflicts a job went through are counted on it (`conflicts()`). A job no longer
pending is skipped, so replays after a crash never apply twice.

SQLite (one machine): the writer's threads take jobs from an in-process queue, and the next writer
resumes the file's pending jobs. PostgreSQL: the threads claim jobs from the shared table with a
lease (tools/memrec/job_queue.py), so any number of writer processes on any machine drain one queue
exactly once, and a job whose writer died is claimed again once its lease expires.
"""

from __future__ import annotations

import atexit
import logging
import os
import queue
import socket
import threading
import time
import uuid
from collections.abc import Iterable
from types import TracebackType

from tools.memrec.graph import MemoryGraph
from tools.memrec.jobs import NodeUpdate, PropagationJob, merge_memory
from world.database import DatabaseError

__all__ = ["MemoryWriter", "NodeUpdate", "PropagationJob", "merge_memory", "shared_writer"]

log = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
"""How long a claimed job is reserved for its writer (shared queue). A job takes milliseconds, so 30 s
is ample even on a loaded machine or across a short database restart, while a dead writer's job
waits at most this long for another writer. An expired lease of a writer that was only slow costs a
duplicate attempt, never a double application (see tools/memrec/job_queue.py)."""
POLL_SECONDS = 0.05
"""How often an idle worker of the shared queue, and `drain`, look at the table again: jobs queued by
other processes arrive without a signal to this one."""


class MemoryWriter:
    """Applies `PropagationJob`s to a `MemoryGraph` off the caller's thread (or synchronously)."""

    def __init__(
        self,
        graph: MemoryGraph,
        workers: int = 4,
        synchronous: bool = False,
        max_retries: int = 8,
        lease_seconds: float = LEASE_SECONDS,
    ) -> None:
        """Create the queue table, start `workers` threads and resume any pending jobs.

        With a shared (PostgreSQL) memory `workers=0` makes a writer that only queues jobs, for
        other processes to apply; `lease_seconds` is how long a claimed job is reserved."""
        self.graph = graph
        self.store = graph.store
        self.synchronous = synchronous
        self.max_retries = max_retries
        self.lease_seconds = lease_seconds
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        """Who holds this writer's leases (host, process, writer)."""
        self._queue: queue.Queue[PropagationJob | None] = queue.Queue()
        self._done = threading.Condition()
        self._wake = threading.Condition()
        self._outstanding = 0
        self._closed = False
        self.store.create_queue()
        pending = self.store.pending_jobs()
        count = 0 if synchronous else max(0 if self.store.shared else 1, workers)
        target = self._claim if self.store.shared else self._work
        self._threads = [
            threading.Thread(target=target, name=f"memrec-writer-{i}", daemon=True) for i in range(count)
        ]
        for thread in self._threads:
            thread.start()
        for job in pending:
            self._dispatch(job, reraise=False)

    def submit(self, job: PropagationJob) -> None:
        """Persist the job durably, then queue it (or apply it now in synchronous mode)."""
        self.submit_many([job])

    def submit_many(self, jobs: Iterable[PropagationJob]) -> None:
        """Persist several jobs in one transaction, then queue them; known job ids are ignored."""
        if self._closed:
            raise RuntimeError("MemoryWriter is closed")
        batch = list(jobs)
        fresh = self.store.enqueue(batch)
        if self.store.shared and not self.synchronous:
            if fresh:  # the jobs are in the table: wake the workers to claim them
                with self._wake:
                    self._wake.notify_all()
            return
        # Shared and synchronous: a known job may still be pending (its submitter died before
        # applying it), so every job is attempted; attempts skip jobs no longer pending.
        for job in batch if self.store.shared else fresh:
            self._dispatch(job, reraise=True)

    def _dispatch(self, job: PropagationJob, reraise: bool) -> None:
        if self.synchronous:
            self._run(job, reraise=reraise)
            return
        with self._done:
            self._outstanding += 1
        self._queue.put(job)

    def _work(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                self._run(job, reraise=False)
            except Exception:  # recording the failure itself failed (e.g. the graph was closed)
                log.exception("memory writer could not record the outcome of job %s", job.job_id)
            finally:
                with self._done:
                    self._outstanding -= 1
                    self._done.notify_all()

    def _claim(self) -> None:
        """A shared-queue worker: claim a job with a lease, apply it, repeat until closed."""
        while not self._closed:
            try:
                job = self.store.claim(self.owner, self.lease_seconds)
                if job is not None:
                    self._run(job, reraise=False)
                    continue
            except Exception:  # the database stayed away past the wait: keep trying, the job is durable
                log.exception("memory writer %s could not claim or record a job", self.owner)
            with self._wake:
                if not self._closed:
                    self._wake.wait(POLL_SECONDS)

    def _run(self, job: PropagationJob, reraise: bool) -> None:
        try:
            self._apply(job)
        except DatabaseError:
            if reraise:
                raise
            log.error("memory propagation job %s stays queued: the database is unreachable", job.job_id)
        except Exception as error:
            log.error("memory propagation job %s failed: %s", job.job_id, error)
            self.store.fail_job(job.job_id, f"{type(error).__name__}: {error}")
            if reraise:
                raise

    def _apply(self, job: PropagationJob) -> None:
        """Optimistic attempts, then one pessimistic attempt that reads with the nodes locked."""
        nodes = job.node_ids()
        for attempt in range(1, self.max_retries + 2):
            locked = attempt > self.max_retries
            current = None if locked else self.store.memories(nodes)
            # Every attempt before this one hit a version conflict.
            if self.store.apply_job(job, current, attempt, conflicts=attempt - 1) != "conflict":
                return
            if locked:
                raise RuntimeError(f"job {job.job_id}: conflict while holding the write lock")

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued job is applied (or failed); False if `timeout` ran out first.

        Shared queue: until the memory's table holds no pending job, whichever process queued it."""
        if not self.store.shared:
            with self._done:
                return self._done.wait_for(lambda: self._outstanding == 0, timeout)
        if self.synchronous:
            return True
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.store.has_pending():
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(POLL_SECONDS)
        return True

    def stats(self) -> dict[str, int]:
        """Number of jobs per status ('pending', 'done', 'failed') in the durable queue."""
        return self.store.job_stats()

    def failures(self) -> list[tuple[str, str]]:
        """(job_id, error) of every failed job."""
        return self.store.job_failures()

    def conflicts(self) -> int:
        """Version conflicts that forced a job to be recomputed, summed over the queue's jobs (every
        writer's, for a shared queue): each was merged into a retry, none lost an update."""
        return self.store.job_conflicts()

    def done_jobs(self, prefix: str = "") -> set[str]:
        """Ids of the applied jobs starting with `prefix`."""
        return self.store.done_jobs(prefix)

    def close(self, timeout: float | None = None) -> None:
        """Drain the queue, then stop the workers."""
        if self._closed:
            return
        self.drain(timeout)
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
        with self._wake:
            self._wake.notify_all()
        for thread in self._threads:
            thread.join(timeout)

    def __enter__(self) -> MemoryWriter:
        """Use as a context manager; leaving it drains and closes."""
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        """Drain and close."""
        self.close()


_SHARED: dict[tuple[str, bool], MemoryWriter] = {}
_SHARED_LOCK = threading.Lock()


def shared_writer(graph: MemoryGraph, synchronous: bool = False) -> MemoryWriter:
    """The process-wide writer of `graph`'s memory (background or synchronous), created on first use.

    Background writers are drained and closed when the interpreter exits, so queued updates are
    applied (and would anyway be resumed from the durable queue by the next writer)."""
    key = (graph.name, synchronous)
    with _SHARED_LOCK:
        writer = _SHARED.get(key)
        if writer is None:
            writer = _SHARED[key] = MemoryWriter(graph, synchronous=synchronous)
            atexit.register(writer.close)
    return writer
