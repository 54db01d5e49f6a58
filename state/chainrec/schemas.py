"""Pydantic schemas of ChainRec's answers: the tools' shared output, the planner's choice and
CandidateRank's ranking (the request-specific JSON schemas are derived from them in agents/chainrec/)."""

from __future__ import annotations

from pydantic import BaseModel, Field

MAX_FACETS = 8
"""A tool answer keeps at most this many facets."""
FACET_KEY_CHARS = 40
FACET_VALUE_CHARS = 160
SUMMARY_CHARS = 300
NOTE_CHARS = 60
"""Cap on a per-candidate note (keeps a 20-candidate answer inside the output-token budget)."""
REASON_CHARS = 200


class Facet(BaseModel):
    """One (key, value) pair of a tool's evidence."""

    key: str = Field(description="What the facet is about, e.g. favourite_categories.")
    value: str = Field(description="What the evidence shows, in a few words.")


class ItemEvidence(BaseModel):
    """An item tool's finding about one candidate."""

    item_id: str = Field(description="The candidate id (the text inside the square brackets).")
    score: float = Field(description="How well the candidate fits by this tool's evidence, 0 to 1.")
    note: str = Field(default="", description="A few words on why.")


class ToolOutput(BaseModel):
    """The one output schema every tool of the Tool Agent Library shares."""

    facets: list[Facet] = Field(default_factory=list, description="The evidence as (key, value) pairs.")
    confidence: float = Field(description="How much the fetched data supports the facets, 0 to 1.")
    summary: str = Field(description="One or two sentences a ranker can use.")
    items: list[ItemEvidence] = Field(
        default_factory=list, description="Item tools: one entry per candidate; user tools: empty."
    )


class PlannerAnswer(BaseModel):
    """What a planner model is asked for: the next action and why."""

    action: str = Field(description="The next tool to call, or CandidateRank to stop and rank.")
    reason: str = Field(default="", description="One sentence on why this action now.")


class PlannerChoice(PlannerAnswer):
    """A planner's decision: the action, why, and its scores over the feasible actions."""

    scores: dict[str, float] = Field(
        default_factory=dict,
        description="The planner's scores over the feasible actions (not asked of a model).",
    )


class RankedItem(BaseModel):
    """One candidate in CandidateRank's answer."""

    item_id: str = Field(description="The candidate id (the text inside the square brackets).")
    reason: str = Field(default="", description="A short rationale grounded in the evidence.")


class RankAnswer(BaseModel):
    """CandidateRank's answer: every candidate, best first, each with a short rationale."""

    ranked: list[RankedItem] = Field(description="Every candidate once, best first.")
