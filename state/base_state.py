"""The blackboard state every method's state extends."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from state.blackboard import BlackboardMessage, append_messages
from state.degraded import merge_degraded


class BaseState(TypedDict, total=False):
    """Fields shared by every recommender graph; each has one writer (`candidates`: see below)."""

    user_id: str
    """Input: the user (validated against the dataset by `validate_input`)."""
    candidates: list[str] | None
    """Input: items to re-rank, written by `validate_input` (None when the caller gave none:
    retrieve mode). In retrieve mode the method's retrieval node then writes the catalog items
    it ranks: MemRec's `curate`, the classic and LLM baselines' ranker node, ChainRec's planner
    (first visit). ARAG leaves it None and keeps its catalog recall in `recall_set` (`recall`)."""
    instruction: str | None
    """Input: the user's natural-language request, if any."""
    scenario: str
    """Input: which part of the history is visible (see world.scenarios)."""
    history: list[str]
    """Written by `validate_input`: the visible history, oldest first."""
    retrieve_mode: bool
    """Written by `validate_input`: True when candidates came from the catalog, not the caller."""
    ranking: list[str]
    """Written by the ranking node: a permutation of exactly `candidates`."""
    scores: dict[str, float]
    """Written by the ranking node: per-item scores, when the method has them."""
    rationales: dict[str, str]
    """Written by the ranking node: per-item explanations, when the method has them."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """Every node's blackboard posts, in order."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """One `AgentUsage` record per agent invocation (calls, tokens, repairs, fallbacks)."""
    degraded: Annotated[list[str], merge_degraded]
    """Features switched off for lack of a dataset field (`feature: reason`), written by the node that
    switched each off (state.degraded); absent when the dataset has every field the method uses."""
