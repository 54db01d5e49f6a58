"""MemRec's whole-run throughput: users per second from the start of the Stage W
warm-up to the latest ranked user, against the ideal for that run, in metrics.json (`whole_run`).

The ideal counts LLM rounds only: the warm-up's waves (ceil(warm-up users / concurrency), two
dependent LM_Mem calls each: the write's Stage R synthesis, then the write) plus the ranking's waves
times the ranking's LLM depth (synthesise, then rerank unless the Vector ranker is configured), each
round lasting the median Stage W call of the run
(the simulator's latency plus the client's own time). Everything else (MiniLM, embedding, applying
the jobs, curation) is the overhead the efficiency shows.

The `prepare` hook starts the clock and puts the clock's figures in `Prepared.metrics`; the
`record_extras` hook `ranked` advances it as each user's record is made, in the process that ranks
(with `--workers N` the records are made in worker processes and the figures stay at the warm-up).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from state.context import backend_for
from state.memrec.context import MemRecContext

_CLOCKS: dict[str, WholeRunClock] = {}
_LOCK = threading.Lock()


def ranking_depth(context: MemRecContext) -> int:
    """LLM calls on a ranked user's critical path: synthesise (LM_Mem) and rerank (LLM_Rec)."""
    depth = int(backend_for(context, "mem") != "heuristic")
    if context.memrec_ranker == "llm":
        depth += int(backend_for(context, "rec") != "heuristic")
    return depth


WARMUP_DEPTH = 2
"""Dependent LLM calls of one warm-up write: its Stage R synthesis, then the write."""


def median_call_seconds(usage_rows: list[dict[str, Any]]) -> float | None:
    """Median duration of the LLM requests in agent usage records (None when there were none)."""
    spans = [end - start for row in usage_rows for start, end in row.get("intervals") or []]
    return float(np.median(spans)) if spans else None


@dataclass
class WholeRunClock:
    """One method's whole-run clock; `figures` is the live `whole_run` entry of metrics.json."""

    started: float
    """`time.perf_counter()` when the warm-up started."""
    concurrency: int
    """Users (and warm-up jobs) in flight at once."""
    warmup_users: int
    """Warm-up jobs asked in this run (a resumed run asks only the missing ones)."""
    depth: int
    """`ranking_depth` of the method's context."""
    round_seconds: float | None = None
    """Median Stage W call duration (set after the warm-up)."""
    ranked: int = 0
    """Users ranked in this run so far."""
    figures: dict[str, Any] = field(default_factory=dict)
    """The metrics.json entry, updated in place."""

    def warmed(self, seconds: float, round_seconds: float | None, embedded_ahead: int) -> None:
        """Record the end of the warm-up (jobs applied, changed memories embedded)."""
        self.round_seconds = round_seconds
        self.figures.update(
            warmup_seconds=round(seconds, 3),
            warmup_users=self.warmup_users,
            embedded_during_warmup=embedded_ahead,
        )

    def ranked_one(self) -> None:
        """One more user ranked: refresh users/s, the ideal and their ratio."""
        self.ranked += 1
        seconds = time.perf_counter() - self.started
        waves = WARMUP_DEPTH * math.ceil(self.warmup_users / self.concurrency) + self.depth * math.ceil(
            self.ranked / self.concurrency
        )
        ideal = (
            self.ranked / (waves * self.round_seconds)
            if self.round_seconds and self.depth and self.warmup_users
            else None
        )
        users_per_s = self.ranked / seconds
        self.figures.update(
            users=self.ranked,
            seconds=round(seconds, 3),
            users_per_s=users_per_s,
            llm_rounds=waves,
            round_seconds=self.round_seconds,
            ideal_users_per_s=ideal,
            efficiency=users_per_s / ideal if ideal else None,
        )


def start_clock(
    started: float, memory: str, concurrency: int, warmup_users: int, context: MemRecContext
) -> WholeRunClock:
    """The clock (started at `time.perf_counter()` value `started`) of the method whose memory graph
    file is `memory`, replacing an earlier one."""
    clock = WholeRunClock(started, max(1, concurrency), warmup_users, ranking_depth(context))
    with _LOCK:
        _CLOCKS[memory] = clock
    return clock


def ranked(metrics: dict[str, Any], details: dict[str, Any], context: MemRecContext) -> dict[str, Any]:
    """`record_extras` hook of MemRec methods: advances the method's clock; adds no detail."""
    with _LOCK:
        clock = _CLOCKS.get(context.memrec_memory)
        if clock is not None:
            clock.ranked_one()
    return {}
