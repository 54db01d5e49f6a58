"""Calls and tokens a method's metrics.json entry records: its users' ranking and what its prepare
hook spent (MemRec's Stage W warm-up `stage_w`, AMEM4Rec's pool `training`, a learned planner's
`planner_training`: every nested block that counts `input_tokens`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Usage:
    """LLM calls and tokens, ranking and prepare together."""

    calls: float
    """Requests the model answered."""
    input_tokens: float
    """Prompt tokens."""
    output_tokens: float
    """Completion tokens."""

    def per(self, users: int) -> Usage:
        """The same divided over `users` (per-user means)."""
        n = max(1, users)
        return Usage(self.calls / n, self.input_tokens / n, self.output_tokens / n)

    def times(self, users: float) -> Usage:
        """The same multiplied by `users`."""
        return Usage(self.calls * users, self.input_tokens * users, self.output_tokens * users)

    def __add__(self, other: Usage) -> Usage:
        """Both together."""
        return Usage(*(a + b for a, b in zip(self._values, other._values, strict=True)))

    def __sub__(self, other: Usage) -> Usage:
        """This minus `other` (per field; may be negative, e.g. a fitted line's intercept)."""
        return Usage(*(a - b for a, b in zip(self._values, other._values, strict=True)))

    def clipped(self) -> Usage:
        """The same with every negative field at 0."""
        return Usage(*(max(0.0, v) for v in self._values))

    @property
    def _values(self) -> tuple[float, float, float]:
        return (self.calls, self.input_tokens, self.output_tokens)


ZERO = Usage(0, 0, 0)
"""No calls, no tokens."""


def measured_usage(entry: Mapping[str, Any]) -> Usage:
    """What one method's entry counts: its top-level ranking usage plus every prepare block."""
    return _sum([entry, *_prepare_blocks(entry)])


def prepare_usage(entry: Mapping[str, Any]) -> Usage:
    """What the method's prepare hook spent (its nested blocks counting `input_tokens`)."""
    return _sum(_prepare_blocks(entry))


def _prepare_blocks(entry: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [v for v in entry.values() if isinstance(v, Mapping) and "input_tokens" in v]


def _sum(blocks: list[Mapping[str, Any]]) -> Usage:
    return Usage(
        sum(float(b.get("llm_calls", 0) or 0) for b in blocks),
        sum(float(b.get("input_tokens", 0) or 0) for b in blocks),
        sum(float(b.get("output_tokens", 0) or 0) for b in blocks),
    )
