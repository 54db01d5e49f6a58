"""Which traces are mined: the correct and concise ones (paper Sec. 4.1 (i)): the target within the
top 5 of the final ranking, no more steps than the budget, and no step repeating the one before it
(compared after label normalisation). Fallback answers are not model reasoning and are dropped.

When a file holds several valid chains for one task (same user and target), self-consistency keeps
one: the majority outcome (the most frequent top-1 item; ties: the outcome with the shorter chain),
then its shortest chain (ties: the first in the file); the others count as `self_consistency`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from agents.chainrec.mining.labels import normalise_label
from agents.chainrec.mining.records import Trace

TOP_K = 5
"""A trace is correct when its target ranks within the first `TOP_K`."""

DROP_REASONS: tuple[str, ...] = (
    "fallback",
    "no_steps",
    "target_not_in_top5",
    "over_budget",
    "immediate_repeat",
    "self_consistency",
)
"""Why a trace is dropped, in the order they are checked (a trace counts under its first reason)."""


def drop_reason(trace: Trace, budget: int) -> str | None:
    """Why `trace` is not mined (one of `DROP_REASONS`), or None when it is kept."""
    if trace.source != "llm":
        return "fallback"
    labels = [normalise_label(step.label) for step in trace.steps]
    if not labels or not all(labels):
        return "no_steps"
    if trace.target not in trace.ranking[:TOP_K]:
        return "target_not_in_top5"
    if len(labels) > budget:
        return "over_budget"
    if any(a == b for a, b in pairwise(labels)):
        return "immediate_repeat"
    return None


@dataclass
class Selection:
    """The filter's outcome."""

    kept: list[Trace] = field(default_factory=list)
    """Traces that are mined."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Dropped traces by reason."""

    @property
    def total(self) -> int:
        """Traces seen."""
        return len(self.kept) + sum(self.dropped.values())


def _consistent(chains: list[Trace]) -> Trace:
    """The kept chain of one task: the shortest chain of the majority top-1 outcome."""
    votes = Counter(chain.ranking[0] for chain in chains)
    shortest = {top: min(len(c.steps) for c in chains if c.ranking[0] == top) for top in votes}
    outcome = min(votes, key=lambda top: (-votes[top], shortest[top]))
    return next(c for c in chains if c.ranking[0] == outcome and len(c.steps) == shortest[outcome])


def select(traces: Sequence[Trace], budget: int) -> Selection:
    """Split `traces` into kept ones (one per task, see the module) and drop counts by reason."""
    selection = Selection()
    tasks: dict[tuple[str, str], list[Trace]] = {}
    for trace in traces:
        reason = drop_reason(trace, budget)
        if reason is None:
            tasks.setdefault((trace.user_id, trace.target), []).append(trace)
        else:
            selection.dropped[reason] += 1
    for chains in tasks.values():
        selection.kept.append(_consistent(chains))
        if len(chains) > 1:
            selection.dropped["self_consistency"] += len(chains) - 1
    return selection
