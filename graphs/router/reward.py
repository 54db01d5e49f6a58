"""The router's `record_extras` hook: R(τ) = AvgHR@{1,3,5} − λ_steps·|τ| − λ_cost·tokens(τ) for
results.jsonl, tokens(τ) being the chain's planned tokens (CandidateRank's `details.planned_tokens`:
each tool call's planned prompt and answer, so the heuristic backend's runs are scored as an LLM run
of the same chain would be charged)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.chainrec.offline.reward import reward
from state.router.context import RouterContext


def reward_extras(
    metrics: Mapping[str, float], details: Mapping[str, Any], context: RouterContext
) -> dict[str, float]:
    """The scored user's reward from their avg_hr, the episode's tool calls and its planned tokens."""
    return {
        "reward": reward(
            float(metrics["avg_hr"]),
            int(details.get("steps", 0)),
            context.chainrec_reward_lambda,
            int(details.get("planned_tokens", 0)),
            context.router_cost_lambda,
        )
    }
