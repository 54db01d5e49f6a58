"""Stage W writer: bounded merges, no lost updates under concurrency, crash-safe resume."""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tools.memrec.graph import MemoryGraph
from tools.memrec.writer import MemoryWriter, NodeUpdate, PropagationJob, merge_memory
from world.environment import get_environment

REPO = Path(__file__).resolve().parents[2]
TOKEN = re.compile(r"\btok\d{4}\b")


def write_ring_dataset(folder: Path) -> Path:
    """Ten users x ten items (20 nodes), each user with four interactions on a ring."""
    folder.mkdir(parents=True, exist_ok=True)
    items = ["item_id:token\tmovie_title:token_seq\tclass:token_seq"]
    items += [f"{i}\tTitle {i}\t{'Drama' if i % 2 else 'Comedy'}" for i in range(1, 11)]
    (folder / "ring.item").write_text("\n".join(items) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for u in range(1, 11):
        inter += [f"{u}\t{(u + k) % 10 + 1}\t4\t{100 * (k + 1)}" for k in range(4)]
    (folder / "ring.inter").write_text("\n".join(inter) + "\n")
    return folder


NODES = [f"u:{u}" for u in range(1, 11)] + [f"i:{i}" for i in range(1, 11)]


def make_jobs(n: int = 1000, seed: int = 3) -> list[PropagationJob]:
    """Jobs appending a unique token to 2-3 of the 20 nodes each (overlapping heavily)."""
    rng = random.Random(seed)
    return [
        PropagationJob(
            job_id=f"job-{j}",
            updates=tuple(NodeUpdate(node, f"tok{j:04d}") for node in rng.sample(NODES, rng.choice((2, 3)))),
            max_chars=100_000,
        )
        for j in range(n)
    ]


def assert_each_token_once(graph: MemoryGraph, jobs: list[PropagationJob]) -> None:
    """Every (node, token) of every job is present exactly once; versions count every update."""
    memories = graph.memories(NODES)
    expected = Counter()
    for job in jobs:
        for update in job.updates:
            expected[update.node_id, update.text] += 1
    found = Counter((node, token) for node, (text, _) in memories.items() for token in TOKEN.findall(text))
    assert found == expected
    assert sum(version for _, version in memories.values()) == sum(len(job.updates) for job in jobs)


@pytest.fixture
def ring(tmp_path: Path, backend: str):
    """The ring dataset's memory graph (in SQLite or PostgreSQL)."""
    env = get_environment(str(write_ring_dataset(tmp_path / "ring")))
    g = MemoryGraph.open(env, tmp_path / "ring.sqlite")
    yield g
    g.close()


def test_merge_memory_dedupes_bounds_and_keeps_the_anchor() -> None:
    merged = merge_memory("Star Wars (1977). Loved by sci-fi fans.", "loved by SCI-FI fans!  Great score")
    assert merged == "Star Wars (1977). Loved by sci-fi fans. Great score."
    assert merge_memory(merged, "Great score") == merged
    long = merge_memory("Anchor.", " ".join(f"Fact number {i}." for i in range(100)), max_chars=80)
    assert len(long) <= 80 and long.startswith("Anchor.") and long.endswith("Fact number 99.")
    assert len(merge_memory("x" * 50, "y" * 50, max_chars=30)) == 30


def test_job_compute_is_pure_and_replace_respects_versions() -> None:
    current = {"u:1": ("Old profile.", 4), "i:2": ("Item.", 0)}
    job = PropagationJob(
        "j", (NodeUpdate("u:1", "New profile.", "replace", 4), NodeUpdate("i:2", "Liked by u1."))
    )
    assert job.compute(current) == {"u:1": "New profile.", "i:2": "Item. Liked by u1."}
    stale = PropagationJob("j", (NodeUpdate("u:1", "New profile.", "replace", 3),))
    assert stale.compute(current) == {"u:1": "Old profile. New profile."}
    assert current["u:1"] == ("Old profile.", 4)
    assert PropagationJob.from_json(job.to_json()) == job


def test_synchronous_mode_applies_on_submit_once(ring: MemoryGraph) -> None:
    writer = MemoryWriter(ring, synchronous=True)
    job = PropagationJob("s1", (NodeUpdate("u:1", "Enjoys comedies."), NodeUpdate("i:2", "Popular.")))
    writer.submit(job)
    assert ring.memory("u:1")[0].endswith("Enjoys comedies.") and ring.memory("u:1")[1] == 1
    writer.submit(job)  # same job id: at-least-once delivery, applied once
    assert ring.memory("u:1")[1] == 1 and writer.stats() == {"done": 1}
    with pytest.raises(KeyError, match="u:ghost"):
        writer.submit(PropagationJob("s2", (NodeUpdate("u:ghost", "x"),)))
    assert writer.stats() == {"done": 1, "failed": 1} and writer.failures()[0][0] == "s2"
    writer.close()


def test_background_failure_is_recorded_not_raised(ring: MemoryGraph) -> None:
    with MemoryWriter(ring, workers=2) as writer:
        writer.submit(PropagationJob("bad", (NodeUpdate("i:99", "x"),)))
        writer.submit(PropagationJob("good", (NodeUpdate("i:1", "Fine."),)))
        assert writer.drain(timeout=30)
        assert writer.stats() == {"done": 1, "failed": 1}
        assert "KeyError" in writer.failures()[0][1]


def test_concurrent_jobs_from_16_threads_lose_no_update(ring: MemoryGraph) -> None:
    jobs = make_jobs(1000)
    with MemoryWriter(ring, workers=4) as writer:
        threads = [
            threading.Thread(target=lambda k=k: [writer.submit(j) for j in jobs[k::16]]) for k in range(16)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert writer.drain(timeout=120)
    assert_each_token_once(ring, jobs)
    assert writer.stats() == {"done": 1000}
    assert writer.conflicts() >= 0
    assert writer.done_jobs("job-99") == {"job-99"} | {f"job-99{k}" for k in range(10)}


CHILD = """
import sys, time
from world.environment import get_environment
from tools.memrec.graph import MemoryGraph
from tools.memrec.writer import MemoryWriter, PropagationJob
from tests.memrec.test_memory_writer import make_jobs

compute = PropagationJob.compute
def slow(self, current):
    time.sleep(0.002)  # make the queue take long enough to be killed part-way
    return compute(self, current)
PropagationJob.compute = slow

graph = MemoryGraph.open(get_environment(sys.argv[1]), sys.argv[2])
writer = MemoryWriter(graph, workers=2)
writer.submit_many(make_jobs(1000))
print("submitted", flush=True)
writer.drain()
print("finished", flush=True)
"""


@pytest.mark.timeout(300)
def test_writer_killed_mid_queue_resumes_without_double_applying(tmp_path: Path) -> None:
    folder = write_ring_dataset(tmp_path / "ring")
    path = tmp_path / "killed.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(folder), str(path)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "submitted"
    probe = sqlite3.connect(path, timeout=60)
    deadline = time.monotonic() + 120
    while probe.execute("SELECT COUNT(*) FROM jobs WHERE status = 'done'").fetchone()[0] < 100:
        assert time.monotonic() < deadline and child.poll() is None
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    done_at_kill = probe.execute("SELECT COUNT(*) FROM jobs WHERE status = 'done'").fetchone()[0]
    probe.close()
    assert 100 <= done_at_kill < 1000, "the writer must be killed part-way through its queue"

    graph = MemoryGraph.open(get_environment(str(folder)), path)
    with MemoryWriter(graph, workers=4) as writer:
        assert writer.drain(timeout=120)
    assert writer.stats() == {"done": 1000}
    assert_each_token_once(graph, make_jobs(1000))
    graph.close()


def release_and_wait(children: list[subprocess.Popen], timeout: float) -> None:
    """Tell every waiting writer process "go" at once, then wait for each to print "finished" and
    exit cleanly."""
    for child in children:
        assert child.stdin is not None
        child.stdin.write("go\n")
        child.stdin.flush()
    for child in children:
        assert child.stdout is not None and child.stdout.readline().strip() == "finished"
        assert child.wait(timeout=timeout) == 0
