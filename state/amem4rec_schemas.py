"""Pydantic schemas of AMEM4Rec's agent answers (the paper's output fields, Appendix A) and the
tight JSON schemas sent to the models (ids constrained to the ones offered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field


class PatternExtraction(BaseModel):
    """The extractor's answer: an abstract behaviour pattern p of one window."""

    behavior_explanation: str = Field(description="1-2 sentences: stable, high-level tendencies.")
    pattern_description: str = Field(
        description="1-2 sentences: interaction structure (sequence, repetition, co-occurrence)."
    )


class LinkDecision(BaseModel):
    """The semantic validator's answer: which offered memories the new pattern reinforces."""

    should_link: bool = Field(description="True when at least one offered memory should be linked.")
    linked_thought_ids: list[str] = Field(
        default_factory=list, description="Ids of the offered memories to link."
    )
    reasoning: str = Field(default="", description="1-2 sentences explaining the decision.")


class MemoryRewrite(BaseModel):
    """The evolver's rewrite of one linked memory (null keeps that field as it is)."""

    thought_id: str = Field(description="Id of a linked memory.")
    behavior_explanation: str | None = Field(default=None, description="The rewritten behaviour, or null.")
    pattern_description: str | None = Field(default=None, description="The rewritten pattern, or null.")
    reasoning: str = Field(default="", description="One short sentence on the change.")


class Evolution(BaseModel):
    """The evolver's answer: rewrites of the linked memories, all in one call."""

    should_evolve: bool = Field(description="False when the new pattern improves none of them.")
    updates: list[MemoryRewrite] = Field(default_factory=list, description="One entry per memory changed.")


class MemoryRanking(BaseModel):
    """The ranker's answer: every candidate, best first, and one sentence of reasoning."""

    ranked_item_ids: list[str] = Field(description="Every candidate id, best first, each once.")
    reasoning: str = Field(default="", description="One sentence on how history and memories shaped it.")


def _text(max_chars: int | None = None) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, **({"maxLength": max_chars} if max_chars else {})}


def extraction_json_schema() -> dict[str, Any]:
    """`PatternExtraction` as sent to the model (lengths are bounded by validation, not the grammar)."""
    return {
        "type": "object",
        "properties": {"behavior_explanation": _text(), "pattern_description": _text()},
        "required": ["behavior_explanation", "pattern_description"],
        "additionalProperties": False,
    }


def link_json_schema(offered: Sequence[str]) -> dict[str, Any]:
    """`LinkDecision` with `linked_thought_ids` an enum of exactly the offered memory ids."""
    ids = list(offered)
    return {
        "type": "object",
        "properties": {
            "should_link": {"type": "boolean"},
            "linked_thought_ids": {
                "type": "array",
                "items": {"type": "string", "enum": ids},
                "maxItems": len(ids),
            },
            "reasoning": _text(240),
        },
        "required": ["should_link", "linked_thought_ids", "reasoning"],
        "additionalProperties": False,
    }


def evolution_json_schema(linked: Sequence[str]) -> dict[str, Any]:
    """`Evolution` with `thought_id` an enum of exactly the linked memory ids."""
    nullable = {"anyOf": [{"type": "string", "minLength": 1}, {"type": "null"}]}
    return {
        "type": "object",
        "properties": {
            "should_evolve": {"type": "boolean"},
            "updates": {
                "type": "array",
                "maxItems": len(linked),
                "items": {
                    "type": "object",
                    "properties": {
                        "thought_id": {"type": "string", "enum": list(linked)},
                        "behavior_explanation": nullable,
                        "pattern_description": nullable,
                        "reasoning": _text(200),
                    },
                    "required": ["thought_id", "behavior_explanation", "pattern_description", "reasoning"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["should_evolve", "updates"],
        "additionalProperties": False,
    }


def memory_ranking_json_schema(candidates: Sequence[str], reason_chars: int = 240) -> dict[str, Any]:
    """`MemoryRanking` with `ranked_item_ids` an enum of exactly the candidates, each once."""
    return {
        "type": "object",
        "properties": {
            "ranked_item_ids": {
                "type": "array",
                "items": {"type": "string", "enum": list(candidates)},
                "minItems": len(candidates),
                "maxItems": len(candidates),
            },
            "reasoning": _text(reason_chars),
        },
        "required": ["ranked_item_ids", "reasoning"],
        "additionalProperties": False,
    }
