"""Pydantic schemas of AMEM4Rec's agent answers: the paper's output fields (Appendix A). The
request-specific JSON schemas (ids as enums of the ones offered) are derived from them by the
agents with `agents.validation.constrained_schema`."""

from __future__ import annotations

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
