"""ChainRec's episode state: S_t = (u, I_cand, M_t), the feasibility mask and the planner's decisions.

The episode memory M_t grows through `append_memory` (M_{t+1} = M_t ⊕ [(a_t, o_t)]); every other
field has exactly one writer, named in its docstring.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from typing_extensions import TypedDict

from state.base_state import BaseState


class MemoryEntry(TypedDict):
    """One (a_t, o_t) pair of the episode memory: a tool call and its structured output."""

    step: int
    """1-based position of the call in the trajectory."""
    tool: str
    """The tool's name (e.g. LongTermPreference)."""
    facets: list[dict[str, str]]
    """The evidence as {key, value} pairs."""
    confidence: float
    """How much the fetched data supports the facets, 0 to 1."""
    summary: str
    """One or two sentences for the planner and CandidateRank."""
    items: list[dict[str, Any]]
    """Item tools: {item_id, score, note} per candidate; user tools: empty."""
    source: str
    """Where the output came from: "llm", "heuristic" (no LLM) or "fallback" (the LLM failed)."""
    stats: dict[str, float]
    """What the tool fetched, as counts (history_items, low_rated_items, cold_candidates, ...):
    facts of the fetch, never model text; the rule planner reads them."""
    evidence: list[str]
    """User tools: the ids of the items the facets are about (e.g. the liked items), a fact of the
    fetch; CandidateRank's fallback compares candidates with them. Item tools: empty."""


class Decision(TypedDict):
    """One planner decision."""

    step: int
    """How many tools had run when the decision was made."""
    action: str
    """The chosen action (a tool name or CandidateRank), after repair."""
    reason: str
    """Why, in the planner's words."""
    scores: dict[str, float]
    """The planner's scores over the feasible actions."""
    planner: str
    """Which planner decided (rule, llm, fixed, ...)."""
    repaired: str | None
    """None, or why the proposed action was replaced (unknown_action, infeasible_action)."""


def append_memory(left: list[MemoryEntry] | None, right: list[MemoryEntry] | None) -> list[MemoryEntry]:
    """Reducer of M_t: entries are only ever appended, in the order the tools ran."""
    return [*(left or []), *(right or [])]


class ChainRecState(BaseState, total=False):
    """Blackboard of the ChainRec graph."""

    domain: dict[str, bool]
    """Written by `planner` (first visit): what the dataset carries (ratings, reviews, categories,
    timestamps, authors, locations); decides which tools can ever be feasible."""
    memory: Annotated[list[MemoryEntry], append_memory]
    """Written by every tool node (one entry per call, through `append_memory`): M_t."""
    mask: dict[str, bool]
    """Written by `planner` before every decision: action -> feasible now."""
    mask_notes: dict[str, str]
    """Written by `planner`: why each infeasible action is masked."""
    next_action: str
    """Written by `planner`: the chosen action; `route_planner` turns it into the next node."""
    next_node: str
    """Written by `planner`: the node that runs the chosen action's card in the run's library (a mined
    card may run on another tool's node)."""
    decisions: Annotated[list[Decision], operator.add]
    """Written by `planner`: every decision of the episode, in order."""
    details: dict[str, Any]
    """Written by `candidate_rank`: steps, tools used, the trajectory and planner repairs."""
