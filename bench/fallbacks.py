"""How much of a run's LLM results came from fallbacks, and when that warns or fails the run.

An agent answer "came from a fallback" when an LLM was asked and every attempt failed (transport
error or unusable answer), so the agent's deterministic fallback answered instead. The share is
counted only over answers an LLM was asked for: the heuristic backend and the classic baselines ask
none (their share is None, shown as "–"), so the documented no-LLM baseline never warns or fails.
Stage W warm-up and training calls made before ranking are reported apart (`stage_w`, `training`)
and do not enter the ranking's share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_WARN_ABOVE = 0.05
"""A method whose fallback share is above this gets a visible warning (table, report.md, console)."""
DEFAULT_FAIL_ABOVE = 0.5
"""Above this, `recgraph bench` exits non-zero (after writing every output) unless --allow-fallbacks."""
EXIT_TOO_MANY_FALLBACKS = 3
"""`recgraph bench`'s exit code when a method's fallback share is above the failure threshold."""


def usage_count(usage: Mapping[str, Any], key: str) -> float:
    """One usage total of a results.jsonl record; records written before `llm_attempts` and
    `llm_answers` existed count attempts in `llm_calls` and have no answer count (0)."""
    if key in usage:
        return usage[key]
    return usage.get("llm_calls", 0) if key == "llm_attempts" else 0


def fallback_share(summary: Mapping[str, Any]) -> float | None:
    """`fallbacks / llm_answers` of a method's totals; None when no answer was asked of an LLM."""
    answers = summary.get("llm_answers") or 0
    return summary.get("fallbacks", 0) / answers if answers else None


def format_share(share: float | None) -> str:
    """A share as a percentage, "–" when there is none (no LLM asked)."""
    return "–" if share is None else f"{100 * share:.1f}%"


FALLBACK_NOTE = (
    "llm_attempts: requests sent (retries included); llm_calls: requests the model answered; "
    "fallback_share: share of the agent answers asked of an LLM that came from the deterministic "
    "fallback after every attempt failed (– when no LLM was asked: heuristic backend, classic methods)"
)
"""What the usage columns mean (report.md states it under the settings)."""


@dataclass
class FallbackCheck:
    """The run's verdict on fallbacks: which methods are above the warning and failure thresholds."""

    warn_above: float = DEFAULT_WARN_ABOVE
    """Warning threshold on the share."""
    fail_above: float = DEFAULT_FAIL_ABOVE
    """Failure threshold on the share."""
    allowed: bool = False
    """--allow-fallbacks: methods above `fail_above` warn but do not fail the run."""
    warned: dict[str, float] = field(default_factory=dict)
    """Method -> share, for every method above `warn_above`."""
    failed: dict[str, float] = field(default_factory=dict)
    """Method -> share, for every method above `fail_above`."""

    @property
    def fails(self) -> bool:
        """Whether the run must exit non-zero."""
        return bool(self.failed) and not self.allowed

    def warning(self) -> str:
        """One line naming the methods above the warning threshold ("" when none is)."""
        if not self.warned:
            return ""
        shares = ", ".join(f"{m} {format_share(s)}" for m, s in self.warned.items())
        return (
            f"WARNING: fallbacks answered more than {format_share(self.warn_above)} of the LLM agent "
            f"answers of {shares}: these rows mix heuristic fallback answers into LLM results."
        )

    def failure(self) -> str:
        """One line naming the methods above the failure threshold ("" when none is)."""
        if not self.failed:
            return ""
        shares = ", ".join(f"{m} {format_share(s)}" for m, s in self.failed.items())
        verdict = "allowed by --allow-fallbacks" if self.allowed else "the run fails"
        return (
            f"fallback share above {format_share(self.fail_above)} for {shares} ({verdict}); the outputs "
            "are written; check the errors in metrics.json, or pass --allow-fallbacks to accept them"
        )

    def as_dict(self) -> dict[str, Any]:
        """metrics.json's `fallbacks` entry."""
        return {
            "warn_above": self.warn_above,
            "fail_above": self.fail_above,
            "allowed": self.allowed,
            "warned": self.warned,
            "failed": self.failed,
        }


def check_fallbacks(
    methods: Mapping[str, Mapping[str, Any]],
    warn_above: float = DEFAULT_WARN_ABOVE,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    allowed: bool = False,
) -> FallbackCheck:
    """Compare every method's `fallback_share` with the thresholds."""
    check = FallbackCheck(warn_above=warn_above, fail_above=fail_above, allowed=allowed)
    for name, row in methods.items():
        share = row.get("fallback_share")
        if share is None:
            continue
        if share > warn_above:
            check.warned[name] = share
        if share > fail_above:
            check.failed[name] = share
    return check


def fallback_lines(fallbacks: FallbackCheck | None) -> list[str]:
    """The fallback warning and failure lines to show above a table (none when all is well)."""
    if fallbacks is None:
        return []
    return [line for line in (fallbacks.warning(), fallbacks.failure()) if line]
