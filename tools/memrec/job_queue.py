"""Stage W's durable job queue in PostgreSQL, drained exactly once by any number of writer processes.

A writer claims the oldest pending job with `SELECT ... FOR UPDATE SKIP LOCKED` and takes a lease
on it (`owner`, kept afterwards as the last claimer; `lease_until`; `attempts` + 1); other writers
skip it until the lease expires, so a job whose writer died is claimed again. Exactly-once does not
rest on the lease: a job's attempt locks the job's row first and proceeds only while it is
'pending', and the nodes' compare-and-set and the done-mark commit in that same transaction. Two
writers holding the same job (an expired lease whose owner was only slow) apply it once: the
second finds it done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, TypeVar

from tools.memrec.jobs import Outcome, PropagationJob, VersionConflict

if TYPE_CHECKING:
    from psycopg import Connection

T = TypeVar("T")


class PostgresJobQueue:
    """The job-queue half of `PostgresStore` (it provides `key`, `run` and `compare_and_set`)."""

    key: str
    """This memory's `graph_key`."""

    def run(self, work: Callable[[Connection], T], what: str) -> T:
        """`work(conn)` in one transaction, replayed across a restart (provided by `PostgresStore`)."""
        raise NotImplementedError

    def _memories(self, conn: Connection, ids: list[str], lock: bool = False) -> dict[str, tuple[str, int]]:
        raise NotImplementedError

    def compare_and_set(
        self, conn: Connection, update_id: str, node_id: str, new_text: str, based_on_version: int
    ) -> bool:
        """See `PostgresStore.compare_and_set`."""
        raise NotImplementedError

    def create_queue(self) -> None:
        """Nothing to do: the store created `memrec_jobs` with its other tables."""

    def enqueue(self, jobs: Iterable[PropagationJob]) -> list[PropagationJob]:
        """Persist the jobs in one transaction; returns those whose id was new."""
        batch = list(jobs)
        now = time.time()

        def work(conn: Connection) -> list[PropagationJob]:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO memrec_jobs (graph_key, job_id, payload, submitted_at)"
                    " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING job_id",
                    [(self.key, job.job_id, job.to_json(), now) for job in batch],
                    returning=True,
                )
                fresh = set()
                while True:
                    row = cursor.fetchone()
                    if row is not None:
                        fresh.add(row[0])
                    if not cursor.nextset():
                        break
            return [job for job in batch if job.job_id in fresh]

        return self.run(work, "queueing Stage W jobs") if batch else []

    def pending_jobs(self) -> list[PropagationJob]:
        """Nothing to hand over: writers claim pending jobs from the table themselves."""
        return []

    def claim(self, owner: str, lease_seconds: float) -> PropagationJob | None:
        """Lease the oldest pending job nobody holds (or whose lease expired), or None."""

        def work(conn: Connection) -> PropagationJob | None:
            row = conn.execute(
                "UPDATE memrec_jobs SET owner = %s, lease_until = now() + make_interval(secs => %s),"
                " attempts = attempts + 1 WHERE (graph_key, job_id) = ("
                "  SELECT graph_key, job_id FROM memrec_jobs WHERE graph_key = %s AND status = 'pending'"
                "  AND (lease_until IS NULL OR lease_until < now()) ORDER BY seq LIMIT 1"
                "  FOR UPDATE SKIP LOCKED) RETURNING payload",
                (owner, lease_seconds, self.key),
            ).fetchone()
            return None if row is None else PropagationJob.from_json(row[0])

        return self.run(work, "claiming a Stage W job")

    def apply_job(
        self, job: PropagationJob, current: dict[str, tuple[str, int]] | None, attempt: int, conflicts: int
    ) -> Outcome:
        """One attempt: compare-and-set every node of `job` from `current` (None: read and lock them
        in this transaction, which cannot conflict) and mark the job done, in one transaction."""
        nodes = job.node_ids()
        texts = None if current is None else job.compute(current)  # pure: outside the transaction

        def work(conn: Connection) -> Outcome:
            status = conn.execute(
                "SELECT status FROM memrec_jobs WHERE graph_key = %s AND job_id = %s FOR UPDATE",
                (self.key, job.job_id),
            ).fetchone()
            if status is not None and status[0] != "pending":
                return "skipped"  # a replay, or another writer applied it
            read, new = current, texts
            if read is None:
                read = self._memories(conn, nodes, lock=True)
                new = job.compute(read)
            assert new is not None
            for node in sorted(nodes):  # one lock order for every job: no deadlocks between them
                if not self.compare_and_set(conn, f"{job.job_id}#{node}", node, new[node], read[node][1]):
                    raise VersionConflict(node)
            conn.execute(
                "UPDATE memrec_jobs SET status = 'done', conflicts = %s, error = NULL,"
                " lease_until = NULL, finished_at = %s WHERE graph_key = %s AND job_id = %s",
                (conflicts, time.time(), self.key, job.job_id),
            )
            return "applied"

        try:
            return self.run(work, f"applying Stage W job {job.job_id}")
        except VersionConflict:  # rolled back with its transaction
            return "conflict"

    def fail_job(self, job_id: str, error: str) -> None:
        """Mark a job failed with its error (unless another writer finished it meanwhile)."""
        self.run(
            lambda conn: conn.execute(
                "UPDATE memrec_jobs SET status = 'failed', error = %s, finished_at = %s,"
                " lease_until = NULL WHERE graph_key = %s AND job_id = %s AND status = 'pending'",
                (error, time.time(), self.key, job_id),
            ),
            "recording a failed Stage W job",
        )

    def _query(self, sql: str, what: str, *params: object) -> list[tuple]:
        return self.run(lambda conn: conn.execute(sql, (self.key, *params)).fetchall(), what)

    def job_stats(self) -> dict[str, int]:
        """Number of this memory's jobs per status."""
        rows = self._query(
            "SELECT status, COUNT(*) FROM memrec_jobs WHERE graph_key = %s GROUP BY status", "counting jobs"
        )
        return {status: count for status, count in rows}

    def job_failures(self) -> list[tuple[str, str]]:
        """(job_id, error) of every failed job."""
        sql = "SELECT job_id, error FROM memrec_jobs WHERE graph_key = %s AND status = 'failed'"
        return [(job_id, error) for job_id, error in self._query(sql, "listing failed jobs")]

    def job_conflicts(self) -> int:
        """Version conflicts that forced a recompute, summed over the done jobs."""
        sql = "SELECT COALESCE(SUM(conflicts), 0) FROM memrec_jobs WHERE graph_key = %s"
        return int(self._query(sql, "counting conflicts")[0][0])

    def done_jobs(self, prefix: str) -> set[str]:
        """Ids of the done jobs starting with `prefix`."""
        sql = (
            "SELECT job_id FROM memrec_jobs WHERE graph_key = %s AND status = 'done'"
            " AND left(job_id, %s) = %s"
        )
        return {job_id for (job_id,) in self._query(sql, "listing done jobs", len(prefix), prefix)}

    def has_pending(self) -> bool:
        """Whether any job is still queued (not done nor failed), whoever holds it; one index probe,
        as every idle writer asks it often."""
        sql = "SELECT EXISTS (SELECT 1 FROM memrec_jobs WHERE graph_key = %s AND status = 'pending')"
        return bool(self._query(sql, "looking for pending jobs")[0][0])
