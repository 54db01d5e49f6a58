"""Stage W's background writer: a durable queue of propagation jobs applied with optimistic concurrency.

`submit` persists the job in the graph's SQLite file (table `jobs`) before returning, so a killed
process resumes its queue on the next `MemoryWriter`. A worker reads the nodes' (text, version),
runs the job's pure `compute`, and compare-and-sets every node plus marks the job done in ONE
transaction: a version conflict rolls the whole job back and it is recomputed from fresh memories
(bounded retries, then once more under the write lock, which cannot conflict). A job already marked
done is skipped, so replays after a crash never apply twice.
"""

from __future__ import annotations

import atexit
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from types import TracebackType
from typing import Literal

from tools.memrec.graph import MemoryGraph

log = logging.getLogger(__name__)

_JOBS = """CREATE TABLE IF NOT EXISTS jobs (
    job_id TEXT PRIMARY KEY, payload TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'pending',
    attempts INTEGER NOT NULL DEFAULT 0, error TEXT, submitted_at REAL NOT NULL, finished_at REAL)"""
_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")


def _phrases(text: str) -> list[str]:
    return [p.strip() for p in _SPLIT.split(text) if p.strip()]


def _key(phrase: str) -> str:
    return " ".join(re.sub(r"[\W_]+", " ", phrase.lower()).split())


def merge_memory(old: str, addition: str, max_chars: int = 600) -> str:
    """Append `addition`'s new phrases to `old` (case/punctuation-insensitive dedupe), bounded length.

    The first phrase (the node's anchor: a title or profile head) is kept; when the text is too
    long the oldest phrases after it go first; a last resort truncates with an ellipsis.
    """
    phrases: list[str] = []
    seen: set[str] = set()
    for phrase in _phrases(old) + _phrases(addition):
        key = _key(phrase)
        if key and key not in seen:
            seen.add(key)
            phrases.append(phrase if phrase[-1] in ".!?;…" else phrase + ".")
    length = sum(map(len, phrases)) + max(len(phrases) - 1, 0)
    while len(phrases) > 2 and length > max_chars:
        length -= len(phrases.pop(1)) + 1
    text = " ".join(phrases)
    return text if len(text) <= max_chars else text[: max_chars - 1].rstrip() + "…"


@dataclass(frozen=True)
class NodeUpdate:
    """One node's share of a propagation job."""

    node_id: str
    """Target node ("u:<user>" or "i:<item>")."""
    text: str
    """Text to merge in (mode 'merge') or the new memory (mode 'replace')."""
    mode: Literal["merge", "replace"] = "merge"
    """'merge' appends via `merge_memory`; 'replace' rewrites the memory."""
    based_on_version: int | None = None
    """For 'replace': the version the text was written from; if the node moved on since, the text
    is merged instead, so the concurrent update is not lost."""


@dataclass(frozen=True)
class PropagationJob:
    """A batch of node updates from one interaction, applied atomically."""

    job_id: str
    """Unique id; resubmitting the same id is a no-op (at-least-once delivery, applied once)."""
    updates: tuple[NodeUpdate, ...]
    """The node updates (a node may appear more than once; they apply in order)."""
    max_chars: int = 600
    """Length bound of each resulting memory."""

    def node_ids(self) -> list[str]:
        """Distinct nodes the job touches, in first-mention order."""
        return list(dict.fromkeys(u.node_id for u in self.updates))

    def compute(self, current: Mapping[str, tuple[str, int]]) -> dict[str, str]:
        """Pure step: new text per node from `{node_id: (text, version)}`; KeyError for a missing node."""
        texts = {node: current[node][0] for node in self.node_ids()}
        for u in self.updates:
            stale = u.based_on_version is not None and u.based_on_version != current[u.node_id][1]
            if u.mode == "replace" and not stale:
                texts[u.node_id] = merge_memory("", u.text, self.max_chars)
            else:
                texts[u.node_id] = merge_memory(texts[u.node_id], u.text, self.max_chars)
        return texts

    def to_json(self) -> str:
        """Serialised form stored in the queue."""
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, payload: str) -> PropagationJob:
        """Inverse of `to_json`."""
        data = json.loads(payload)
        updates = tuple(NodeUpdate(**u) for u in data.pop("updates"))
        return cls(updates=updates, **data)


class _Conflict(Exception):
    """A node moved on since it was read; roll the job back and recompute."""


class MemoryWriter:
    """Applies `PropagationJob`s to a `MemoryGraph` off the caller's thread (or synchronously)."""

    def __init__(
        self, graph: MemoryGraph, workers: int = 4, synchronous: bool = False, max_retries: int = 8
    ) -> None:
        """Create the queue table, start `workers` threads and resume any pending jobs."""
        self.graph = graph
        self.synchronous = synchronous
        self.max_retries = max_retries
        self._queue: queue.Queue[PropagationJob | None] = queue.Queue()
        self._done = threading.Condition()
        self._outstanding = 0
        self._closed = False
        graph.connection().execute(_JOBS)
        pending = (
            graph.connection()
            .execute("SELECT payload FROM jobs WHERE status = 'pending' ORDER BY rowid")
            .fetchall()
        )
        count = 0 if synchronous else max(1, workers)
        self._threads = [
            threading.Thread(target=self._work, name=f"memrec-writer-{i}", daemon=True) for i in range(count)
        ]
        for thread in self._threads:
            thread.start()
        for (payload,) in pending:
            self._dispatch(PropagationJob.from_json(payload), reraise=False)

    def submit(self, job: PropagationJob) -> None:
        """Persist the job durably, then queue it (or apply it now in synchronous mode)."""
        self.submit_many([job])

    def submit_many(self, jobs: Iterable[PropagationJob]) -> None:
        """Persist several jobs in one transaction, then queue them; known job ids are ignored."""
        if self._closed:
            raise RuntimeError("MemoryWriter is closed")
        fresh = []
        with self.graph.transaction() as conn:
            for job in jobs:
                cursor = conn.execute(
                    "INSERT OR IGNORE INTO jobs (job_id, payload, submitted_at) VALUES (?, ?, ?)",
                    (job.job_id, job.to_json(), time.time()),
                )
                if cursor.rowcount:
                    fresh.append(job)
        for job in fresh:
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

    def _run(self, job: PropagationJob, reraise: bool) -> None:
        try:
            self._apply(job)
        except Exception as error:
            log.error("memory propagation job %s failed: %s", job.job_id, error)
            with self.graph.transaction() as conn:
                conn.execute(
                    "UPDATE jobs SET status = 'failed', error = ?, finished_at = ? WHERE job_id = ?",
                    (f"{type(error).__name__}: {error}", time.time(), job.job_id),
                )
            if reraise:
                raise

    def _apply(self, job: PropagationJob) -> None:
        """Optimistic attempts, then one pessimistic attempt that reads inside the write lock."""
        nodes = job.node_ids()
        for attempt in range(1, self.max_retries + 2):
            locked = attempt > self.max_retries
            current = {} if locked else self.graph.memories(nodes)
            try:
                with self.graph.transaction() as conn:
                    status = conn.execute(
                        "SELECT status FROM jobs WHERE job_id = ?", (job.job_id,)
                    ).fetchone()
                    if status is not None and status[0] == "done":
                        return  # a replay: already applied
                    if locked:
                        current = self.graph.memories(nodes, conn)
                    texts = job.compute(current)
                    for node in nodes:
                        update_id = f"{job.job_id}#{node}"
                        if not self.graph.compare_and_set(
                            conn, update_id, node, texts[node], current[node][1]
                        ):
                            raise _Conflict(node)
                    conn.execute(
                        "UPDATE jobs SET status = 'done', attempts = ?, error = NULL, finished_at = ?"
                        " WHERE job_id = ?",
                        (attempt, time.time(), job.job_id),
                    )
                return
            except _Conflict:
                if locked:
                    raise RuntimeError(f"job {job.job_id}: conflict while holding the write lock") from None

    def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued job is applied (or failed); False if `timeout` ran out first."""
        with self._done:
            return self._done.wait_for(lambda: self._outstanding == 0, timeout)

    def stats(self) -> dict[str, int]:
        """Number of jobs per status ('pending', 'done', 'failed') in the durable queue."""
        rows = self.graph.connection().execute("SELECT status, COUNT(*) FROM jobs GROUP BY status")
        return {status: count for status, count in rows}

    def failures(self) -> list[tuple[str, str]]:
        """(job_id, error) of every failed job."""
        rows = self.graph.connection().execute("SELECT job_id, error FROM jobs WHERE status = 'failed'")
        return [(job_id, error) for job_id, error in rows]

    def close(self, timeout: float | None = None) -> None:
        """Drain the queue, then stop the workers."""
        if self._closed:
            return
        self.drain(timeout)
        self._closed = True
        for _ in self._threads:
            self._queue.put(None)
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
    """The process-wide writer of `graph`'s file (background or synchronous), created on first use.

    Background writers are drained and closed when the interpreter exits, so queued updates are
    applied (and would anyway be resumed from the durable queue by the next writer)."""
    key = (str(graph.path), synchronous)
    with _SHARED_LOCK:
        writer = _SHARED.get(key)
        if writer is None:
            writer = _SHARED[key] = MemoryWriter(graph, synchronous=synchronous)
            atexit.register(writer.close)
    return writer
