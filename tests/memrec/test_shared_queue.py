"""Stage W's queue in PostgreSQL: writer processes (each with its own RECGRAPH_HOME) drain one queue
exactly once, a killed writer's leased job is applied once by another, a server restart is waited
out, and a process on another home reads the same memory vectors."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from agents.memrec.feature_index import feature_index
from tests.memrec.test_memory_writer import (
    REPO,
    assert_each_token_once,
    make_jobs,
    release_and_wait,
    write_ring_dataset,
)
from tests.postgres_server import PostgresServer
from tools.memrec.graph import MemoryGraph
from tools.memrec.writer import MemoryWriter, NodeUpdate, PropagationJob
from world.database import DATABASE_URL_ENV
from world.environment import get_environment

WRITER = """
import sys, time
from tools.memrec.graph import MemoryGraph
from tools.memrec.jobs import PropagationJob
from tools.memrec.writer import MemoryWriter
from world.environment import get_environment

folder, path, lease, workers, stall = sys.argv[1:6]
compute = PropagationJob.compute
def slow(self, current):
    if self.job_id == stall:
        print("holding", flush=True)
        time.sleep(600)
    time.sleep(0.002)  # widen the read-to-commit window so writers do conflict
    return compute(self, current)
PropagationJob.compute = slow

graph = MemoryGraph.open(get_environment(folder), path)
writer = MemoryWriter(graph, workers=int(workers), lease_seconds=float(lease))
print("ready", writer.owner, flush=True)
sys.stdin.readline()
writer.drain()
writer.close()
print("finished", flush=True)
"""


def spawn(home: Path, url: str, *args: str) -> subprocess.Popen[str]:
    """A writer process on its own RECGRAPH_HOME, after it printed "ready <owner>"."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "RECGRAPH_HOME": str(home), DATABASE_URL_ENV: url}
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, *args],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    line = child.stdout.readline().split()
    assert line[:1] == ["ready"], line
    child.owner = line[1]  # type: ignore[attr-defined]
    return child


@pytest.fixture
def shared_ring(tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch):
    """The ring dataset's memory in a fresh PostgreSQL database: (dataset folder, memory path, graph)."""
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    folder = write_ring_dataset(tmp_path / "ring")
    path = tmp_path / "ring.sqlite"
    graph = MemoryGraph.open(get_environment(str(folder)), path)
    yield folder, path, graph
    graph.close()


def job_rows(url: str) -> dict[str, tuple[str, str | None, int]]:
    """{job_id: (status, owner, attempts)} straight from the table."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT job_id, status, owner, attempts FROM memrec_jobs").fetchall()
    return {job_id: (status, owner, attempts) for job_id, status, owner, attempts in rows}


@pytest.mark.timeout(300)
def test_two_writer_processes_drain_one_queue_exactly_once(
    shared_ring, tmp_path: Path, postgres_url: str
) -> None:
    folder, path, graph = shared_ring
    args = (str(folder), str(path), "30", "2", "-")
    children = [spawn(tmp_path / f"home{k}", postgres_url, *args) for k in (0, 1)]
    jobs = make_jobs(200)
    producer = MemoryWriter(graph, workers=0)  # queues only: the two processes apply
    producer.submit_many(jobs)
    release_and_wait(children, timeout=60)
    assert producer.stats() == {"done": 200}
    assert_each_token_once(graph, jobs)  # every update once: none lost, none doubled
    with psycopg.connect(postgres_url) as conn:
        sql = "SELECT COUNT(*), COUNT(DISTINCT update_id) FROM memrec_applied_updates"
        applied = conn.execute(sql).fetchone()
    assert applied == (sum(len(job.node_ids()) for job in jobs),) * 2
    rows = job_rows(postgres_url)
    assert all(attempts == 1 for _, _, attempts in rows.values())  # each claimed once: no lease expired
    assert {owner for _, owner, _ in rows.values()} == {child.owner for child in children}  # both worked
    assert producer.conflicts() > 0  # conflicts were counted (and merged: every token is present)


@pytest.mark.timeout(300)
def test_a_killed_writers_leased_job_is_applied_once_by_another(
    shared_ring, tmp_path: Path, postgres_url: str
) -> None:
    folder, path, graph = shared_ring
    jobs = make_jobs(20)
    child = spawn(tmp_path / "home", postgres_url, str(folder), str(path), "2", "1", "job-0")
    assert child.stdin is not None and child.stdout is not None
    # Queued only once the child said "ready": its worker claims from the start, and a job queued
    # earlier could make it say "holding" first. job-0 is queued first, so the child (the only
    # claimer) takes it first and stalls in it.
    producer = MemoryWriter(graph, workers=0)
    producer.submit_many(jobs)
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "holding"
    assert job_rows(postgres_url)["job-0"] == ("pending", child.owner, 1)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    started = time.monotonic()
    with MemoryWriter(graph, workers=2, lease_seconds=2) as writer:
        assert writer.drain(timeout=60)
    assert time.monotonic() - started >= 1.0  # job-0 waited for the dead writer's lease
    rows = job_rows(postgres_url)
    assert rows["job-0"] == ("done", writer.owner, 2)  # claimed again after the lease, applied once
    assert all(status == "done" for status, _, _ in rows.values())
    assert_each_token_once(graph, jobs)


@pytest.fixture
def own_server() -> Iterator[PostgresServer]:
    """A PostgreSQL of this test's own, to restart. Not the session's: its cluster sits under pytest's
    temporary root, which another pytest session starting on the machine resets to mode 0700, and
    the unprivileged server then cannot reach its data directory to start again."""
    folder = Path(tempfile.mkdtemp(prefix="recgraph-pg-"))
    server = PostgresServer(folder / "cluster")
    server.init()
    server.start()
    try:
        yield server
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.timeout(300)
def test_a_server_restart_mid_queue_is_waited_out(
    tmp_path: Path, own_server: PostgresServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, own_server.create_database())
    env = get_environment(str(write_ring_dataset(tmp_path / "ring")))
    graph = MemoryGraph.open(env, tmp_path / "r.sqlite")
    compute = PropagationJob.compute

    def slow(self: PropagationJob, current: dict[str, tuple[str, int]]) -> dict[str, str]:
        time.sleep(0.003)
        return compute(self, current)

    monkeypatch.setattr(PropagationJob, "compute", slow)
    jobs = make_jobs(300)
    with MemoryWriter(graph, workers=2) as writer:
        writer.submit_many(jobs)
        deadline = time.monotonic() + 60
        while writer.stats().get("done", 0) < 40:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert writer.stats().get("done", 0) < 300
        own_server.stop("fast")  # the writers' transactions fail from here until the restart
        time.sleep(1.5)
        own_server.start()
        assert writer.drain(timeout=120)
        assert writer.stats() == {"done": 300}, writer.failures()
    assert_each_token_once(graph, jobs)


VECTORS = """
import sys
import numpy as np
import world.vector_memo as memo
from agents.memrec.feature_index import feature_index
from world.environment import get_environment

embedded = []
embed = memo.embed_alone
memo.embed_alone = lambda texts: embedded.extend(texts) or embed(texts)
changed = feature_index(get_environment(sys.argv[1]), sys.argv[2]).updated_vectors()
vectors = {node: changed[node] for node in changed}
np.savez(sys.argv[3], embedded=np.array(len(embedded)), **vectors)
"""


@pytest.mark.timeout(300)
def test_a_process_on_another_home_reads_the_same_memory_vectors(
    tiny_dataset_dir: Path, tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Updated memories' vectors are shared through the database: a process with another
    RECGRAPH_HOME (no file of ours) ranks with exactly the vectors this one read, embedding none."""
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    env = get_environment(str(tiny_dataset_dir))
    memory = str(tmp_path / "memory.sqlite")
    index = feature_index(env, memory)
    writer = MemoryWriter(index.graph, synchronous=True)
    updates = (NodeUpdate("u:u1", "Loves space operas."), NodeUpdate("i:3", "Cult hit."))
    writer.submit(PropagationJob("w1", updates))
    changed = index.updated_vectors()
    mine = {node: changed[node] for node in changed}  # read: embedded and saved to the database
    home = tmp_path / "other-home"
    home.mkdir()
    models = Path(os.environ["RECGRAPH_HOME"]) / "models"
    if models.is_dir():  # the exported MiniLM only: no dataset cache, no saved vectors
        (home / "models").symlink_to(models)
    out = tmp_path / "other.npz"
    child_env = {**os.environ, "PYTHONPATH": str(REPO), "RECGRAPH_HOME": str(home)}
    subprocess.run(
        [sys.executable, "-c", VECTORS, str(tiny_dataset_dir), memory, str(out)],
        cwd=REPO, env=child_env, check=True, timeout=240,
    )  # fmt: skip
    with np.load(out) as theirs:
        assert int(theirs["embedded"]) == 0
        assert set(theirs.files) - {"embedded"} == set(mine) == {"u:u1", "i:3"}
        assert all(np.array_equal(theirs[node], mine[node]) for node in mine)
    assert json.dumps(writer.stats()) == '{"done": 1}'
