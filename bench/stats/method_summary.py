"""One method's records summarised for metrics.json: metric means, LLM usage totals, per-agent
counts, how much of the rankings the model decided, degraded features and method details."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agents.ranking import CUTOFFS, ORIGINS
from agents.usage import summarise_usage
from bench.protocol.metrics import mean_metrics
from bench.stats.fallbacks import fallback_share, usage_count

USAGE_FIELDS = (
    "llm_attempts",
    "llm_calls",
    "llm_answers",
    "input_tokens",
    "output_tokens",
    "est_cost_usd",
    "fallbacks",
    "repairs",
)
AGENT_COUNTS = tuple(f for f in USAGE_FIELDS if f != "est_cost_usd")
AGENT_FIELDS = (*AGENT_COUNTS, "est_cost_usd")


def agent_breakdown(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per-agent calls, tokens, repairs and fallbacks of one user."""
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_agent.setdefault(record["agent"], []).append(record)
    return {
        agent: {k: v for k, v in summarise_usage(rows).items() if k in AGENT_FIELDS}
        for agent, rows in by_agent.items()
    }


def add_counts(target: dict[str, Any], counts: dict[str, Any]) -> None:
    """Add integer counts into `target` (for error / repair kind tables)."""
    for key, value in counts.items():
        target[key] = target.get(key, 0) + value


def method_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate one method's records into the metrics.json entry."""
    ordered = sorted(records, key=lambda r: r["user_id"])
    summary: dict[str, Any] = mean_metrics(r["metrics"] for r in ordered)
    summary["users"] = len(ordered)
    judged = [r for r in ordered if "recalled" in r]
    if judged:  # retrieval sources: the same metrics over the users whose target the retrieval recalled
        recalled = [r for r in judged if r["recalled"]]
        summary["on_recalled"] = {**mean_metrics(r["metrics"] for r in recalled), "users": len(recalled)}
    for field in USAGE_FIELDS:
        total = math.fsum(usage_count(r["usage"], field) for r in ordered)
        summary[field] = total if field == "est_cost_usd" else int(total)
    summary["fallback_share"] = fallback_share(summary)
    origin = origin_totals(ordered)
    if origin is not None:  # methods with an LLM ranker only (classic methods rank without one)
        summary["model_share"] = model_share(origin)
        summary["ranking_origin"] = origin
    summary["seconds_per_user"] = math.fsum(r["seconds"] for r in ordered) / max(1, len(ordered))
    summary["tokens_estimated"] = any(r["usage"]["tokens_estimated"] for r in ordered)
    errors: dict[str, int] = {}
    repair_kinds: dict[str, int] = {}
    agents: dict[str, dict[str, Any]] = {}
    truncated: dict[str, int] = {}
    for record in ordered:
        add_counts(errors, record["usage"]["errors"])
        add_counts(repair_kinds, record["usage"]["repair_kinds"])
        add_counts(truncated, record.get("truncated") or {})
        for agent, row in record["agents"].items():
            add_counts(agents.setdefault(agent, {}), {k: v for k, v in row.items() if k in AGENT_COUNTS})
    summary["errors"] = errors
    summary["repair_kinds"] = repair_kinds
    summary["agents"] = agents
    # Answers cut off at their output budget, per agent (their total is errors["truncated"]).
    summary["truncated_by_agent"] = dict(sorted(truncated.items()))
    degraded = list(dict.fromkeys(entry for r in ordered for entry in r.get("degraded", [])))
    if degraded:  # features switched off for lack of a dataset field (state/degraded.py)
        summary["degraded"] = degraded
    details = [r["details"] for r in ordered if "details" in r]
    if details:
        summary["details"] = summarise_details(details)
    return summary


def origin_totals(records: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """Ranking positions per origin (model, repair, fallback) summed over the users, for the top 1,
    the top 5 and all positions (metrics.json `ranking_origin`), with `rankings` (users ranked by an
    LLM ranker agent) and `asked_llm` (those whose ranker asked an LLM: not the heuristic backend).
    None when no record has a `ranking_origin` (classic methods, records of older runs)."""
    rows = [r["ranking_origin"] for r in records if "ranking_origin" in r]
    if not rows:
        return None
    totals: dict[str, Any] = {
        head: {origin: sum(row[head][origin] for row in rows) for origin in ORIGINS} for head in CUTOFFS
    }
    totals["rankings"] = len(rows)
    totals["asked_llm"] = sum(1 for row in rows if row["source"] != "heuristic")
    return totals


def model_share(totals: dict[str, Any]) -> dict[str, float]:
    """The share of the ranking positions the model decided, per head (`top1`, `top5`, `all`), over
    the users' positions (0 with the heuristic backend: no model decided anything)."""
    return {head: totals[head]["model"] / max(1, sum(totals[head].values())) for head in CUTOFFS}


def summarise_details(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-user method details over users: numbers averaged, lists of names counted (lists of
    records, e.g. a trajectory, stay per user in results.jsonl)."""
    summary: dict[str, Any] = {}
    for key in dict.fromkeys(k for row in rows for k in row):
        values = [row[key] for row in rows if key in row]
        if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
            summary[key] = math.fsum(values) / len(values)
        elif all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in values):
            summary[key] = dict(sorted(_count_names(values).items()))
    return summary


def _count_names(values: Sequence[list[Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for names in values:
        for name in names:
            counts[str(name)] = counts.get(str(name), 0) + 1
    return counts
