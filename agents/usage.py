"""Per-agent usage records: calls, tokens, latency, cost, repairs, fallbacks and errors."""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from agents.validation import TRUNCATED

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-3.5-turbo": (0.50, 1.50),
}
"""USD per million (input, output) tokens; unknown and local models cost 0."""


def price_of(model: str, input_tokens: int, output_tokens: int) -> float:
    """Estimated USD cost of one call (longest matching model-name prefix wins)."""
    name = model.split(":", 1)[-1]
    matches = [key for key in PRICES_PER_MILLION if name.startswith(key)]
    if not matches:
        return 0.0
    cost_in, cost_out = PRICES_PER_MILLION[max(matches, key=len)]
    return (input_tokens * cost_in + output_tokens * cost_out) / 1_000_000


def estimate_tokens(text: str) -> int:
    """Rough token count (≈4 characters per token) for backends that report none."""
    return math.ceil(len(text) / 4)


@dataclass
class AgentUsage:
    """What one agent invocation cost (all its attempts together)."""

    agent: str
    """The agent (graph node) name."""
    model: str = "heuristic"
    """Backend/model label."""
    step: int = 0
    """LangGraph superstep the agent ran in (calls in distinct steps are dependent)."""
    attempts: int = 0
    """LLM requests sent (retries and failed requests included)."""
    calls: int = 0
    """Requests the model answered with a message (usable or not: a truncated or malformed answer
    counts, a timeout, refused connection or HTTP error does not)."""
    input_tokens: int = 0
    """Prompt tokens over all calls."""
    output_tokens: int = 0
    """Completion tokens over all calls."""
    tokens_estimated: bool = False
    """True when some call reported no usage and tokens were estimated from characters."""
    cost_usd: float = 0.0
    """Estimated cost from PRICES_PER_MILLION."""
    llm_seconds: float = 0.0
    """Wall time inside LLM calls."""
    intervals: list[tuple[float, float]] = field(default_factory=list)
    """(start, end) perf_counter times of each call, for overhead accounting."""
    repairs: int = 0
    """Outputs that needed repair (unknown/duplicate/missing ids, clipped scores)."""
    repair_kinds: dict[str, int] = field(default_factory=dict)
    """Counts per repair kind (unknown_id, missing_id, score_clipped, ...: see `agents.validation`)."""
    errors: dict[str, int] = field(default_factory=dict)
    """Failed attempts per kind (http_429, http_500, timeout, malformed_json, truncated, ...)."""
    source: str = "heuristic"
    """"llm" (accepted model output), "fallback" (LLM failed) or "heuristic" (no LLM)."""
    model_ids: list[str] | None = None
    """For an agent whose answer ranks the candidates: the ids the model itself placed (kept by
    validation, in the model's order); [] when the fallback answered. None for every other agent.
    Ids of the ranking that are not here were appended by repair (see `agents.ranking`)."""

    @property
    def fallback(self) -> bool:
        """True when an LLM was configured but its output could not be used."""
        return self.source == "fallback"

    def record_call(self, started: float, message: Any, prompt_text: str) -> None:
        """Add one completed request's latency and tokens (estimated if not reported)."""
        ended = time.perf_counter()
        self.attempts += 1
        self.calls += 1
        self.intervals.append((started, ended))
        self.llm_seconds += ended - started
        usage = getattr(message, "usage_metadata", None) if message is not None else None
        if usage and usage.get("input_tokens") is not None:
            tokens_in, tokens_out = int(usage["input_tokens"]), int(usage.get("output_tokens", 0))
        else:
            content = str(getattr(message, "content", "") or "") if message is not None else ""
            tokens_in, tokens_out = estimate_tokens(prompt_text), estimate_tokens(content)
            self.tokens_estimated = True
        self.input_tokens += tokens_in
        self.output_tokens += tokens_out
        self.cost_usd += price_of(self.model, tokens_in, tokens_out)

    def record_failed_call(
        self, started: float, kind: str, completion: Any = None, answered: bool = False
    ) -> None:
        """A request that produced no usable message; tokens counted when the error carries them.

        `answered`: a message arrived but could not be parsed (truncated, malformed): it counts in
        `calls` as well as in `attempts`."""
        ended = time.perf_counter()
        self.attempts += 1
        self.calls += int(answered)
        self.intervals.append((started, ended))
        self.llm_seconds += ended - started
        self.errors[kind] = self.errors.get(kind, 0) + 1
        reported = getattr(completion, "usage", None)
        if reported is not None:
            self.input_tokens += int(reported.prompt_tokens or 0)
            self.output_tokens += int(reported.completion_tokens or 0)
            self.cost_usd += price_of(
                self.model, reported.prompt_tokens or 0, reported.completion_tokens or 0
            )

    def record_error(self, kind: str) -> None:
        """An answer that arrived but was unusable (parse or validation failure)."""
        self.errors[kind] = self.errors.get(kind, 0) + 1

    def record_repairs(self, kinds: Iterable[str]) -> None:
        """Count one repaired output and each repair it needed."""
        kinds = list(kinds)
        if kinds:
            self.repairs += 1
            for kind in kinds:
                self.repair_kinds[kind] = self.repair_kinds.get(kind, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form stored on the blackboard state: what `dataclasses.asdict` gives (fields
        in order, containers copied), built without its generic deep copy (~4x slower)."""
        record = {name: getattr(self, name) for name in _USAGE_FIELDS}
        record["intervals"] = list(self.intervals)  # of (start, end) tuples, immutable
        record["repair_kinds"] = dict(self.repair_kinds)
        record["errors"] = dict(self.errors)
        record["model_ids"] = None if self.model_ids is None else list(self.model_ids)
        record["fallback"] = self.fallback
        return record


_USAGE_FIELDS = tuple(f.name for f in fields(AgentUsage))


def critical_path_depth(records: Iterable[Mapping[str, Any]]) -> int:
    """Longest chain of dependent LLM requests: per superstep the most sequential attempts, summed."""
    longest: dict[int, int] = {}
    for record in records:
        sent = attempts_of(record)
        if sent:
            longest[record["step"]] = max(longest.get(record["step"], 0), sent)
    return sum(longest.values())


def attempts_of(record: Mapping[str, Any]) -> int:
    """Requests an agent record sent (records written before `attempts` existed counted them in `calls`)."""
    return int(record.get("attempts", record["calls"]))


def asked_llm(record: Mapping[str, Any]) -> bool:
    """Whether the agent's answer was asked of an LLM (its source is "llm" or "fallback", not
    "heuristic": the heuristic backend and classic methods never ask one)."""
    return record.get("source", "heuristic") != "heuristic"


def summarise_usage(records: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Totals over agent records: the usage fields of results.jsonl and metrics.json.

    `llm_attempts` counts every request sent, `llm_calls` the requests the model answered (see
    `AgentUsage.calls`), `llm_answers` the agent answers asked of an LLM and `fallbacks` those of
    them that came from the deterministic fallback after every attempt failed."""
    records = list(records)
    errors: Counter[str] = Counter()
    repair_kinds: Counter[str] = Counter()
    for record in records:
        errors.update(record.get("errors", {}))
        repair_kinds.update(record.get("repair_kinds", {}))
    return {
        "llm_attempts": sum(attempts_of(r) for r in records),
        "llm_calls": sum(r["calls"] for r in records),
        "llm_answers": sum(1 for r in records if asked_llm(r)),
        "input_tokens": sum(r["input_tokens"] for r in records),
        "output_tokens": sum(r["output_tokens"] for r in records),
        "est_cost_usd": math.fsum(r["cost_usd"] for r in records),
        "fallbacks": sum(1 for r in records if r.get("fallback")),
        "repairs": sum(r["repairs"] for r in records),
        "tokens_estimated": any(r.get("tokens_estimated") for r in records),
        "errors": dict(errors),
        "repair_kinds": dict(repair_kinds),
        "llm_seconds": math.fsum(r["llm_seconds"] for r in records),
        "critical_path_depth": critical_path_depth(records),
    }


def truncated_answers(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Answers cut off at their output budget (finish reason `length`: the `truncated` error kind),
    per agent, over agent records; agents with none are left out."""
    counts: Counter[str] = Counter()
    for record in records:
        found = int((record.get("errors") or {}).get(TRUNCATED, 0))
        if found:
            counts[record["agent"]] += found
    return dict(counts)
