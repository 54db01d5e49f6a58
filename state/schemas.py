"""Pydantic schemas of agent answers (what each agent must return as JSON)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class RankedList(BaseModel):
    """A ranking of the candidate items."""

    ranking: list[str] = Field(
        description="Every candidate id (the text inside the square brackets), best first, each once."
    )
    reason: str = Field(default="", description="One short sentence on what drove the order.")
