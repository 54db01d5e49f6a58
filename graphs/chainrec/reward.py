"""ChainRec's `record_extras` hook: the episode reward R(τ) = AvgHR@{1,3,5} − λ·|τ| for results.jsonl."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.chainrec.offline.reward import reward
from state.chainrec.context import ChainRecContext


def reward_extras(
    metrics: Mapping[str, float], details: Mapping[str, Any], context: ChainRecContext
) -> dict[str, float]:
    """The scored user's reward from their avg_hr and the episode's tool calls (λ from the context)."""
    return {
        "reward": reward(
            float(metrics["avg_hr"]), int(details.get("steps", 0)), context.chainrec_reward_lambda
        )
    }
