"""ChainRec's `record_extras` hook: the episode reward R(τ) = AvgHR@{1,3,5} − λ·|τ| for results.jsonl."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.chainrec.reward import reward
from state.context import Context


def reward_extras(
    metrics: Mapping[str, float], details: Mapping[str, Any], context: Context
) -> dict[str, float]:
    """The scored user's reward from their avg_hr and the episode's tool calls (λ from the Context)."""
    return {
        "reward": reward(
            float(metrics["avg_hr"]), int(details.get("steps", 0)), context.chainrec_reward_lambda
        )
    }
