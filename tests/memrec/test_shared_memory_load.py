"""Load test of the shared memory (perf-marked, not in the default run): 16 writer processes x 1,000
Stage W jobs on one PostgreSQL memory lose and double no update; Stage W write throughput of SQLite
and PostgreSQL on this machine. Run: `.venv/bin/pytest tests/memrec/test_shared_memory_load.py -m perf -s`.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from tests.memrec.test_memory_writer import REPO, release_and_wait
from tools.memrec.graph import MemoryGraph
from tools.memrec.writer import MemoryWriter, NodeUpdate, PropagationJob
from world.database import DATABASE_URL_ENV
from world.environment import get_environment

PROCESSES = 16
JOBS_PER_PROCESS = 1000
SIDE = 50
"""Users and items of the load dataset: 100 nodes, so concurrent jobs overlap often."""
TOKEN = re.compile(r"\bp\d{2}j\d{4}\b")


def write_dataset(folder: Path) -> Path:
    """SIDE users x SIDE items, each user with four interactions on a ring."""
    folder.mkdir(parents=True, exist_ok=True)
    items = ["item_id:token\tmovie_title:token_seq\tclass:token_seq"]
    items += [f"{i}\tTitle {i}\tDrama" for i in range(1, SIDE + 1)]
    (folder / "load.item").write_text("\n".join(items) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for u in range(1, SIDE + 1):
        inter += [f"{u}\t{(u + k) % SIDE + 1}\t4\t{100 * (k + 1)}" for k in range(4)]
    (folder / "load.inter").write_text("\n".join(inter) + "\n")
    return folder


def make_jobs(process: int, count: int = JOBS_PER_PROCESS) -> list[PropagationJob]:
    """One process's jobs: each appends a unique token to 2-3 random nodes."""
    nodes = [f"u:{k}" for k in range(1, SIDE + 1)] + [f"i:{k}" for k in range(1, SIDE + 1)]
    rng = random.Random(process)
    jobs = []
    for j in range(count):
        targets = rng.sample(nodes, rng.choice((2, 3)))
        updates = tuple(NodeUpdate(n, f"p{process:02d}j{j:04d}") for n in targets)
        jobs.append(PropagationJob(job_id=f"p{process:02d}-{j}", updates=updates, max_chars=1_000_000))
    return jobs


def check_exactly_once(graph: MemoryGraph, jobs: list[PropagationJob]) -> None:
    """Every (node, token) once, and versions counting every update: nothing lost nor doubled."""
    nodes = [f"u:{k}" for k in range(1, SIDE + 1)] + [f"i:{k}" for k in range(1, SIDE + 1)]
    memories = graph.memories(nodes)
    expected = Counter((u.node_id, u.text) for job in jobs for u in job.updates)
    found = Counter((node, token) for node, (text, _) in memories.items() for token in TOKEN.findall(text))
    assert found == expected, "lost or doubled updates"
    assert sum(version for _, version in memories.values()) == sum(len(job.updates) for job in jobs)


CHILD = """
import sys
from tests.memrec.test_shared_memory_load import make_jobs
from tools.memrec.graph import MemoryGraph
from tools.memrec.writer import MemoryWriter
from world.environment import get_environment

folder, path, process = sys.argv[1], sys.argv[2], int(sys.argv[3])
graph = MemoryGraph.open(get_environment(folder), path)
writer = MemoryWriter(graph, workers=2)
jobs = make_jobs(process)
print("ready", flush=True)
sys.stdin.readline()
writer.submit_many(jobs)
writer.drain()
writer.close()
print("finished", flush=True)
"""


def load() -> str:
    """The 1-minute load average, for the report."""
    return f"{os.getloadavg()[0]:.1f}"


@pytest.mark.perf
@pytest.mark.timeout(1800)
def test_16_writer_processes_on_one_postgres_memory(tmp_path: Path, postgres_url: str, monkeypatch) -> None:
    monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
    folder = write_dataset(tmp_path / "load")
    path = tmp_path / "load.sqlite"
    graph = MemoryGraph.open(get_environment(str(folder)), path)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    children = []
    for process in range(PROCESSES):
        env["RECGRAPH_HOME"] = str(tmp_path / f"home{process}")
        command = [sys.executable, "-c", CHILD, str(folder), str(path), str(process)]
        pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
        children.append(subprocess.Popen(command, cwd=REPO, env=dict(env), **pipes))
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
    before = load()
    started = time.perf_counter()
    release_and_wait(children, timeout=120)
    seconds = time.perf_counter() - started
    jobs = [job for process in range(PROCESSES) for job in make_jobs(process)]
    writer = MemoryWriter(graph, workers=0)
    assert writer.stats() == {"done": len(jobs)}
    check_exactly_once(graph, jobs)
    print(
        f"\n{PROCESSES} processes x {JOBS_PER_PROCESS} jobs (2 writer threads each) on one PostgreSQL "
        f"memory of {2 * SIDE} nodes: {len(jobs)} applied once, 0 lost, 0 doubled; "
        f"{writer.conflicts()} conflicts counted and merged; {seconds:.1f} s = "
        f"{len(jobs) / seconds:.0f} jobs/s (load {before} before, {load()} after)"
    )


def throughput(graph: MemoryGraph, jobs: list[PropagationJob]) -> float:
    """Jobs/s of one process's background writer (4 threads) applying `jobs` from submit to drained."""
    started = time.perf_counter()
    with MemoryWriter(graph, workers=4) as writer:
        writer.submit_many(jobs)
        assert writer.drain(timeout=600)
        assert writer.stats() == {"done": len(jobs)}
    seconds = time.perf_counter() - started
    check_exactly_once(graph, jobs)
    return len(jobs) / seconds


@pytest.mark.perf
@pytest.mark.timeout(1800)
def test_stage_w_write_throughput_sqlite_vs_postgres(tmp_path: Path, postgres_url: str, monkeypatch) -> None:
    folder = write_dataset(tmp_path / "load")
    jobs = make_jobs(0, 3000)
    figures = {}
    for backend in ("sqlite", "postgres"):
        if backend == "postgres":
            monkeypatch.setenv(DATABASE_URL_ENV, postgres_url)
        else:
            monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
        graph = MemoryGraph.open(get_environment(str(folder)), tmp_path / f"{backend}.sqlite")
        before = load()
        figures[backend] = (throughput(graph, jobs), before, load())
        graph.close()
    for backend, (rate, before, after) in figures.items():
        threads = f"1 process x 4 writer threads, {len(jobs)} jobs"
        print(f"\nStage W writes, {threads}, {backend}: {rate:.0f} jobs/s (load {before} -> {after})")
    assert all(rate > 0 for rate, _, _ in figures.values())
