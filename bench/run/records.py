"""One results.jsonl line: a graph's output checked against the contract and scored."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.ranking import output_origin
from agents.usage import summarise_usage, truncated_answers
from bench.protocol.metrics import rank_of, user_metrics
from bench.protocol.spec import EvalCase
from bench.stats.method_summary import agent_breakdown
from graphs.registry import hook, method_context
from state.context import Context


class MethodOutputError(RuntimeError):
    """A graph returned something that is not a permutation of the candidates (a bug)."""


def check_ranking(method: str, case: EvalCase, ranking: Sequence[str]) -> None:
    """The contract: a ranking is a permutation of exactly the candidates."""
    if sorted(ranking) != sorted(case.candidates):
        raise MethodOutputError(
            f"{method} returned a ranking for user {case.user_id!r} that is not a permutation "
            f"of its {len(case.candidates)} candidates: {list(ranking)}"
        )


def result_record(
    method: str,
    case: EvalCase,
    output: dict[str, Any],
    seconds: float,
    context: Context | None = None,
) -> dict[str, Any]:
    """One results.jsonl line: ranking, target rank, metrics, usage, time, answers cut off at their
    output budget per agent (`truncated`, when any), where an LLM ranker's positions came from
    (`ranking_origin`: model, repair or fallback) and the method's details (plus what its
    `record_extras` hook computes from the scored ranking, e.g. a reward)."""
    ranking = list(output["ranking"])
    check_ranking(method, case, ranking)
    rank = rank_of(case.target, ranking)
    usage = summarise_usage(output.get("usage") or [])
    record = {
        "method": method,
        "user_id": case.user_id,
        "target": case.target,
        "ranking": ranking,
        "rank": rank,
        "metrics": user_metrics(rank, len(case.candidates)),
        "usage": usage,
        "agents": agent_breakdown(output.get("usage") or []),
        "seconds": seconds,
    }
    if case.recalled is not None:  # retrieval sources: whether the retrieval's top N held the target
        record["recalled"] = case.recalled
    truncated = truncated_answers(output.get("usage") or [])
    if truncated:  # answers cut off at their output budget, per agent (agents/output_budget.py)
        record["truncated"] = truncated
    origin = output_origin(ranking, output.get("usage") or [])
    if origin is not None:  # an LLM ranker's: how many positions its model decided (agents/ranking.py)
        record["ranking_origin"] = origin
    details = dict(output.get("details") or {})
    extras = hook(method, "record_extras")
    if extras is not None:
        details.update(extras(record["metrics"], details, method_context(method, context)))
    if details:
        record["details"] = details
    if output.get("degraded"):
        record["degraded"] = list(output["degraded"])
    return record
