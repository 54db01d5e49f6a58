"""The clock MemRec's recency features read: real timestamps, or interaction order read in days.

With timestamps, an edge's clock is its timestamp (seconds) and recency_days is what it says.

On order-only data (`Dataset.has_time` False: the sequential Amazon dumps, an atomic file without a
timestamp column) there are no days, only each user's order, and a rule of "recency_days > 60"
would compare positions with 60 days. We read positions in days at the dataset's median pace:

- every user's training sequence is taken to end at the same moment (the snapshot the dump was
  cut at), so an edge's age is counted in its owner's own sequence: `later` = how many of the
  owner's training interactions come after it (agents/memrec/dataset_features.py, the count
  edge_weight's recency already uses);
- the dataset's median pace is `median training history length / ORDER_HORIZON_DAYS`
  interactions per day: the median user's training history is taken to span one year;
- an edge's clock is `-later / pace` days (in seconds), so recency_days =
  (later - the user's anchor's later) / pace for the user's items and, for a user neighbour,
  the same difference between its latest shared-item interaction and the user's latest one.

A rule of "the last T days" therefore keeps each user's most recent T x pace interactions (a
share T / 365 of the median history; heavier users reach further back, as in real time), and a
rule's day threshold fires for exactly the neighbours whose interaction is more than T x pace
interactions back. Why one year: it is the longest threshold of the paper's rule sets (Figures
11-12: GoodReads' and MovieTV's 365 days), so each of their thresholds (60 to 365 days) falls
inside a median history and can fire; a shorter span would leave the 365-day rules dead on median
users, a longer one would make the 60-day rules fire on nearly every neighbour. It is an
assumption, not a measurement: order-only data has no pace to measure. With timestamps nothing
changes (the clock is the timestamps, bit for bit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tools.memrec.adjacency import Adjacency, shared_adjacency
from world.environment import Environment

ORDER_HORIZON_DAYS = 365.0
"""On order-only data, the days the median user's training history is taken to span."""
SECONDS_PER_DAY = 86400.0


@dataclass(frozen=True)
class EdgeClock:
    """Each training edge's time as recency features read it (see the module docstring)."""

    user_times: np.ndarray
    """Seconds of each user->item edge (user-major adjacency order)."""
    item_times: np.ndarray
    """Seconds of each item->user edge (item-major adjacency order)."""
    pace: float | None
    """Order-only data: interactions per day the positions are read at; None with timestamps."""

    @property
    def days_per_interaction(self) -> float | None:
        """Order-only data: the days one position stands for (1 / pace); None with timestamps."""
        return None if self.pace is None else 1.0 / self.pace


def median_pace(degree: np.ndarray) -> float:
    """Interactions per day of the dataset's median user: its median training history length (at
    least 1) over `ORDER_HORIZON_DAYS`."""
    active = degree[degree > 0]
    median = float(np.median(active)) if active.size else 1.0
    return max(median, 1.0) / ORDER_HORIZON_DAYS


def order_pace(graph: Adjacency) -> float:
    """Order-only data: the interactions per day positions are read at, the `median_pace` of
    `graph`'s training histories."""
    return median_pace(np.diff(graph.user_ptr).astype(np.float64))


def environment_pace(env: Environment) -> float:
    """`order_pace` of `env`'s shared training graph, the one its edges' clock is read on."""
    return order_pace(shared_adjacency(env))


def position_words(pace: float) -> str:
    """What one position stands for at `pace`, e.g. "one position = 30.4 days"."""
    return f"one position = {1.0 / pace:.1f} days"


def item_major_order(user_ptr: np.ndarray, user_items: np.ndarray) -> np.ndarray:
    """For each item->user edge (by item, then user: tools/memrec/adjacency.py's order), the index
    of the same edge in the user-major arrays."""
    rows = np.repeat(np.arange(len(user_ptr) - 1), np.diff(user_ptr))
    return np.lexsort((rows, user_items))


def edge_clock(has_time: bool, graph: Adjacency, later: np.ndarray) -> EdgeClock:
    """The clock of a dataset's training edges: the timestamps themselves when `has_time`, else
    `-later / median_pace` days (module docstring). `later` counts, per user-major edge of
    `graph`, the owner's newer edges."""
    if has_time:
        return EdgeClock(graph.user_item_times, graph.item_user_times, None)
    pace = order_pace(graph)
    clock = -later * (SECONDS_PER_DAY / pace)
    return EdgeClock(clock, clock[item_major_order(graph.user_ptr, graph.user_items)], pace)
