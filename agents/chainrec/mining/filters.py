"""Which traces are mined: the correct and concise ones (paper Sec. 4.1 (i)): the target within the
top 5 of the final ranking, no more steps than the budget, and no step repeating the one before it
(compared after label normalisation). Fallback answers are not model reasoning and are dropped."""

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


def select(traces: Sequence[Trace], budget: int) -> Selection:
    """Split `traces` into kept ones and drop counts by reason."""
    selection = Selection()
    for trace in traces:
        reason = drop_reason(trace, budget)
        if reason is None:
            selection.kept.append(trace)
        else:
            selection.dropped[reason] += 1
    return selection
