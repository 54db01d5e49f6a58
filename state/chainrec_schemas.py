"""Pydantic schemas of ChainRec's answers (tool outputs, planner choices, CandidateRank) and the tight
JSON schemas sent to the models (ids and actions as enums of what is allowed)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


class PlannerChoice(BaseModel):
    """A planner's decision: the next action and why."""

    action: str = Field(description="The next tool to call, or CandidateRank to stop and rank.")
    reason: str = Field(default="", description="One sentence on why this action now.")
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


def _object(properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _text(max_chars: int) -> dict[str, Any]:
    return {"type": "string", "maxLength": max_chars}


def tool_output_json_schema(candidates: Sequence[str] | None) -> dict[str, Any]:
    """`ToolOutput` as a JSON schema; with `candidates` (item tools) one entry per candidate, ids as
    an enum of exactly the candidates; without them (user tools) no `items` at all."""
    facet = _object({"key": _text(FACET_KEY_CHARS), "value": _text(FACET_VALUE_CHARS)})
    properties: dict[str, Any] = {
        "facets": {"type": "array", "items": facet, "minItems": 1, "maxItems": MAX_FACETS},
        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
        "summary": _text(SUMMARY_CHARS),
    }
    if candidates:
        entry = _object(
            {
                "item_id": {"type": "string", "enum": list(candidates)},
                "score": {"type": "number", "minimum": 0, "maximum": 1},
                "note": _text(NOTE_CHARS),
            }
        )
        size = len(candidates)
        properties["items"] = {"type": "array", "items": entry, "minItems": size, "maxItems": size}
    return _object(properties)


def planner_json_schema(feasible: Sequence[str]) -> dict[str, Any]:
    """`PlannerChoice` as a JSON schema whose action is an enum of exactly the feasible actions."""
    return _object({"action": {"type": "string", "enum": list(feasible)}, "reason": _text(REASON_CHARS)})


def rank_json_schema(candidates: Sequence[str]) -> dict[str, Any]:
    """`RankAnswer` as a JSON schema: exactly one entry per candidate, ids as an enum of them."""
    entry = _object({"item_id": {"type": "string", "enum": list(candidates)}, "reason": _text(NOTE_CHARS)})
    size = len(candidates)
    return _object({"ranked": {"type": "array", "items": entry, "minItems": size, "maxItems": size}})
