"""How much of a run's LLM results came from fallbacks or repair, and when that warns or fails the run.

An agent answer "came from a fallback" when an LLM was asked and every attempt failed (transport
error or unusable answer), so the agent's deterministic fallback answered instead. The share is
counted only over answers an LLM was asked for: the heuristic backend and the classic baselines ask
none (their share is None, shown as "–"), so the documented no-LLM baseline never warns or fails.
Stage W warm-up and training calls made before ranking are reported apart (`stage_w`, `training`)
and do not enter the ranking's share.

An answer the model did give may still decide little of the ranking: validation appends the ids the
model left out in the seeded left-out order (`agents.ranking`). The share of the top-5 positions that the
model did not choose (appended by repair, or from a fallback answer) warns above `--repair-warn` and
fails the run above `--fallback-fail`. It too is counted only for rankings asked of an LLM: with the
heuristic backend the model decides no position by definition, shown as "–", and never warns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_WARN_ABOVE = 0.05
"""A method whose fallback share is above this gets a visible warning (table, report.md, console)."""
DEFAULT_FAIL_ABOVE = 0.5
"""Above this, `recgraph bench` exits non-zero (after writing every output) unless --allow-fallbacks;
the same threshold applies to the share of top-5 positions the model did not choose."""
DEFAULT_REPAIR_WARN_ABOVE = 0.2
"""A method whose share of top-5 positions not chosen by the model is above this gets a warning."""
EXIT_TOO_MANY_FALLBACKS = 3
"""`recgraph bench`'s exit code when a method's fallback share, or its share of top-5 positions not
chosen by the model, is above the failure threshold."""


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


def not_chosen(row: Mapping[str, Any], head: str = "top5") -> dict[str, float] | None:
    """The share of a method's `head` positions the model did not choose (`share`), split into
    `repair` (appended by validation) and `fallback`; None when none of its rankings asked an LLM
    (classic methods, the heuristic backend, records without `ranking_origin`)."""
    origin = row.get("ranking_origin")
    if not origin or not origin.get("asked_llm"):
        return None
    counts = origin[head]
    total = sum(counts.values())
    if not total:
        return None
    repair, fallback = counts["repair"] / total, counts["fallback"] / total
    return {"share": (counts["repair"] + counts["fallback"]) / total, "repair": repair, "fallback": fallback}


def format_model_share(row: Mapping[str, Any], head: str = "top5") -> str:
    """The model's share of a method's `head` positions as a percentage; "–" when no ranking asked an
    LLM (the heuristic backend decides every position by definition; classic methods have none)."""
    if not_chosen(row, head) is None:
        return "–"
    return format_share(row["model_share"][head])


FALLBACK_NOTE = (
    "llm_attempts: requests sent (retries included); llm_calls: requests the model answered; "
    "fallback_share: share of the agent answers asked of an LLM that came from the deterministic "
    "fallback after every attempt failed (– when no LLM was asked: heuristic backend, classic methods); "
    "model@k: share of the top-k positions (all: every position) of the LLM rankers' rankings that the "
    "model chose itself, the rest appended by repair in the seeded left-out order or from fallback answers "
    "(– when no LLM was asked)"
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
    repair_warn_above: float = DEFAULT_REPAIR_WARN_ABOVE
    """Warning threshold on the share of top-5 positions not chosen by the model."""
    not_chosen_warned: dict[str, dict[str, float]] = field(default_factory=dict)
    """Method -> `not_chosen` (share, repair, fallback), for every method above `repair_warn_above`."""
    not_chosen_failed: dict[str, dict[str, float]] = field(default_factory=dict)
    """Method -> `not_chosen`, for every method whose share is above `fail_above`."""

    @property
    def fails(self) -> bool:
        """Whether the run must exit non-zero."""
        return bool(self.failed or self.not_chosen_failed) and not self.allowed

    def warning(self) -> str:
        """One line naming the methods above the warning threshold ("" when none is)."""
        if not self.warned:
            return ""
        shares = ", ".join(f"{m} {format_share(s)}" for m, s in self.warned.items())
        return (
            f"WARNING: fallbacks answered more than {format_share(self.warn_above)} of the LLM agent "
            f"answers of {shares}: these rows mix heuristic fallback answers into LLM results."
        )

    def fallback_failure(self) -> str:
        """One line naming the methods whose fallback share is above the failure threshold ("" when
        none is)."""
        if not self.failed:
            return ""
        shares = ", ".join(f"{m} {format_share(s)}" for m, s in self.failed.items())
        return (
            f"fallback share above {format_share(self.fail_above)} for {shares} ({self._verdict()}); the "
            "outputs are written; check the errors in metrics.json, or pass --allow-fallbacks to accept them"
        )

    def not_chosen_warning(self) -> str:
        """One line naming the methods whose model chose too little of the top 5 ("" when none)."""
        if not self.not_chosen_warned:
            return ""
        shares = ", ".join(
            f"{m} {format_share(s['share'])} (repair {format_share(s['repair'])}, fallback "
            f"{format_share(s['fallback'])})"
            for m, s in self.not_chosen_warned.items()
        )
        return (
            f"WARNING: more than {format_share(self.repair_warn_above)} of the top-5 positions did not come "
            f"from the model in {shares}: validation appended them in the seeded left-out order or a "
            "fallback answered, so these rows are largely heuristic rankings, not LLM results."
        )

    def not_chosen_failure(self) -> str:
        """One line naming the methods whose top-5 share not chosen by the model is above the failure
        threshold ("" when none is)."""
        if not self.not_chosen_failed:
            return ""
        shares = ", ".join(f"{m} {format_share(s['share'])}" for m, s in self.not_chosen_failed.items())
        return (
            f"top-5 positions not chosen by the model above {format_share(self.fail_above)} for {shares} "
            f"({self._verdict()}); the outputs are written; see ranking_origin in metrics.json, or pass "
            "--allow-fallbacks to accept them"
        )

    def failure(self) -> str:
        """One line naming every method above a failure threshold ("" when none is)."""
        return "; ".join(line for line in (self.fallback_failure(), self.not_chosen_failure()) if line)

    def _verdict(self) -> str:
        return "allowed by --allow-fallbacks" if self.allowed else "the run fails"

    def as_dict(self) -> dict[str, Any]:
        """metrics.json's `fallbacks` entry."""
        return {
            "warn_above": self.warn_above,
            "fail_above": self.fail_above,
            "allowed": self.allowed,
            "warned": self.warned,
            "failed": self.failed,
            "repair_warn_above": self.repair_warn_above,
            "not_chosen_warned": self.not_chosen_warned,
            "not_chosen_failed": self.not_chosen_failed,
        }


def check_fallbacks(
    methods: Mapping[str, Mapping[str, Any]],
    warn_above: float = DEFAULT_WARN_ABOVE,
    fail_above: float = DEFAULT_FAIL_ABOVE,
    allowed: bool = False,
    repair_warn_above: float = DEFAULT_REPAIR_WARN_ABOVE,
) -> FallbackCheck:
    """Compare every method's `fallback_share`, and its share of top-5 positions not chosen by the
    model (`not_chosen`), with the thresholds."""
    check = FallbackCheck(
        warn_above=warn_above, fail_above=fail_above, allowed=allowed, repair_warn_above=repair_warn_above
    )
    for name, row in methods.items():
        share = row.get("fallback_share")
        if share is not None and share > warn_above:
            check.warned[name] = share
        if share is not None and share > fail_above:
            check.failed[name] = share
        missed = not_chosen(row)
        if missed is not None and missed["share"] > repair_warn_above:
            check.not_chosen_warned[name] = missed
        if missed is not None and missed["share"] > fail_above:
            check.not_chosen_failed[name] = missed
    return check


def fallback_lines(fallbacks: FallbackCheck | None) -> list[str]:
    """The fallback warning and failure lines to show above a table (none when all is well)."""
    if fallbacks is None:
        return []
    return [line for line in (fallbacks.warning(), fallbacks.fallback_failure()) if line]


def model_share_lines(fallbacks: FallbackCheck | None) -> list[str]:
    """The lines on top-5 positions not chosen by the model, to show after a table (none when all is
    well)."""
    if fallbacks is None:
        return []
    return [line for line in (fallbacks.not_chosen_warning(), fallbacks.not_chosen_failure()) if line]
