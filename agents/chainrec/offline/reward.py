"""ChainRec's trajectory reward R(τ) = AvgHR@{1,3,5}(ranking) − λ·|τ| − λ_cost·tokens(τ) (pure
functions).

|τ| counts the evidence-tool calls (CandidateRank, the terminal action, is not counted); tokens(τ)
the model tokens its tool calls spent (0 with the heuristic backend) and λ_cost defaults to 0, so
ChainRec's reward is the paper's Eq. 5; a library whose tools differ in cost (method tools) sets it.
The offline stage (trajectory scoring, DPO preference pairs) uses the same function.
"""

from __future__ import annotations

from collections.abc import Sequence

CUTOFFS = (1, 3, 5)
"""The hit-rate cutoffs averaged in the quality term."""


def avg_hr(ranking: Sequence[str], target: str) -> float:
    """Mean of HR@1, HR@3 and HR@5 of `target` in `ranking` (0 when it is absent)."""
    if target not in ranking:
        return 0.0
    rank = list(ranking).index(target) + 1
    return sum(rank <= k for k in CUTOFFS) / len(CUTOFFS)


def reward(quality: float, tool_calls: int, lam: float, tokens: int = 0, cost_lam: float = 0.0) -> float:
    """R(τ) from the ranking's AvgHR@{1,3,5} (`quality`), the number of tool calls |τ| and the
    tokens the chain spent (weighted by `cost_lam`)."""
    if tool_calls < 0 or lam < 0 or tokens < 0 or cost_lam < 0:
        raise ValueError("tool_calls, tokens and both lambdas must be non-negative")
    return quality - lam * tool_calls - cost_lam * tokens


def trajectory_reward(ranking: Sequence[str], target: str, tool_calls: int, lam: float) -> float:
    """R(τ) of a finished episode whose held-out target is known (offline scoring)."""
    return reward(avg_hr(ranking, target), tool_calls, lam)
