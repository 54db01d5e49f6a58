"""ARAG's state: the shared blackboard plus the four agents' outputs.

The agents talk through the blackboard (`trace`): the context summary and item ranker
agents read the user-understanding and NLI posts from there. The fields below keep the
same results in typed form for callers and Studio; each has exactly one writer.
"""

from __future__ import annotations

from typing import Annotated, TypedDict

from state.base_state import BaseState


def merge_scores(left: dict[str, float] | None, right: dict[str, float] | None) -> dict[str, float]:
    """Reducer: NLI scores from parallel per-item calls are merged (later keys win)."""
    return {**(left or {}), **(right or {})}


class AragState(BaseState, total=False):
    """The blackboard state of the ARAG graph."""

    recall_set: list[str]
    """Written by `recall`: I⁰, the items the agents judge and the ranker orders (the given
    candidates in re-rank mode, catalog neighbours of the user in retrieve mode)."""
    user_summary: str
    """Written by `user_understanding`: S_user, long-term preferences and session intent."""
    nli_scores: Annotated[dict[str, float], merge_scores]
    """Written by the NLI agent (`nli`, or one `nli_item` per item in per-item mode, merged by
    `merge_scores`): s_NLI(i, u) on the 0–10 scale for every item of the recall set. A thread
    run again keeps earlier requests' keys here; the agents read this run's blackboard posts."""
    accepted_items: list[str]
    """Written by `context_summary`: I⁺, the recall items with s_NLI ≥ θ, most salient first
    (every recall item when NLI is off)."""
    context_summary: str
    """Written by `context_summary`: S_ctx, the summary of the accepted items."""


class NliItemInput(TypedDict):
    """What `recall` sends to each `nli_item` task in per-item mode."""

    user_id: str
    """The user being served."""
    history: list[str]
    """The user's visible history, oldest first."""
    item_id: str
    """The one recall item this task judges."""
