"""Stage W's non-LLM work, overlapped with its LLM calls.

Rankings read the changed memories' embeddings (curation's memory_similarity_score, ReRank), each
embedded on first read (agents/memrec/changed_vectors.py). Embedding them during ranking puts MiniLM
between LLM calls. Here:

- `preload_embedder` starts loading MiniLM in a background thread when the warm-up starts (a no-op
  under `bench`, whose `preload` hook loaded it when the run started: memrec_preload.py);
- `SpeculativeEmbedding` embeds, while the remaining proposals are still being asked, the memories
  each chunk of `CHUNK_USERS` logged proposals will produce (their job applied to the memories as
  they are before the warm-up is applied), for the nodes one job only touches so far (a node
  several jobs touch gets a merged text, known only once they are applied). Such a node gets
  exactly the predicted text unless a later job touches it too, so after the jobs are applied
  mostly the nodes several jobs touched are left to embed.

Reproducible: each text is embedded on its own (`FeatureIndex.embed_memories`), so its vector is
the one a ranking would compute, whatever the concurrency or the order answers arrive in.
"""

from __future__ import annotations

import json
import queue
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from agents.memrec.feature_index import FeatureIndex
from tools.memrec.writer import PropagationJob
from world.embeddings import embed_texts

CHUNK_USERS = 16
"""Warm-up users per speculative embedding batch (fixed: it decides which texts share a batch)."""


def preload_embedder() -> threading.Thread:
    """Start loading MiniLM (and running it once) in a daemon thread; returns the thread."""
    thread = threading.Thread(target=embed_texts, args=(["warm-up"],), name="memrec-minilm", daemon=True)
    thread.start()
    return thread


class SpeculativeEmbedding:
    """Embeds the memories logged warm-up jobs will produce, chunk by chunk, in a worker thread."""

    def __init__(self, index: FeatureIndex, users: Sequence[str]) -> None:
        """`users`: every warm-up user of the run that has a job, in the run's order."""
        self.index = index
        self.chunks = [list(users[i : i + CHUNK_USERS]) for i in range(0, len(users), CHUNK_USERS)]
        self.jobs: dict[str, PropagationJob] = {}
        self.next_chunk = 0
        self.embedded = 0
        self.touched: Counter[str] = Counter()
        self.error: BaseException | None = None
        self._queue: queue.Queue[list[PropagationJob] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._work, name="memrec-speculate", daemon=True)
        self._thread.start()

    def arrived(self, user: str, job: dict[str, Any]) -> None:
        """A user's job is logged; queues every chunk that is now complete, in chunk order."""
        self.jobs[user] = PropagationJob.from_json(json.dumps(job))
        while self.next_chunk < len(self.chunks):
            chunk = self.chunks[self.next_chunk]
            if any(u not in self.jobs for u in chunk):
                break
            self._queue.put([self.jobs[u] for u in chunk])
            self.next_chunk += 1

    def _work(self) -> None:
        while (jobs := self._queue.get()) is not None:
            if self.error is not None:
                continue  # the first failure is reported by `finish`; later chunks are pointless
            self.touched.update(node for job in jobs for node in job.node_ids())
            try:
                self.embedded += self.index.embed_memories(predicted_texts(self.index, jobs, self.touched))
            except Exception as error:  # re-raised in the caller's thread by `finish`
                self.error = error

    def abandon(self) -> None:
        """Stop after the chunk in progress (the warm-up failed; its error is what gets reported)."""
        self.error = self.error or RuntimeError("speculative embedding abandoned")
        self._queue.put(None)

    def finish(self) -> int:
        """Wait for the queued chunks (before the jobs are applied); returns how many texts were
        embedded ahead of time. Re-raises a failure of the worker."""
        self._queue.put(None)
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.embedded


def predicted_texts(index: FeatureIndex, jobs: Sequence[PropagationJob], touched: Counter[str]) -> list[str]:
    """The memories `jobs` give the nodes only one job touches so far (`touched`: jobs per node
    over this chunk and the earlier ones), each job applied alone to the current memories."""
    nodes = list(dict.fromkeys(node for job in jobs for node in job.node_ids()))
    current = index.graph.memories(nodes)
    texts: list[str] = []
    for job in jobs:
        if all(node in current for node in job.node_ids()):
            texts.extend(text for node, text in job.compute(current).items() if touched[node] == 1)
    return texts
