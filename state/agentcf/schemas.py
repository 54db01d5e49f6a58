"""AgentCF's answer schemas: the user agent's choice, the two reflections (ranking uses
`state.schemas.RankedList`)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Choice(BaseModel):
    """The user agent picks one of two items and says why."""

    choice: str = Field(description="The id (inside the square brackets) of the item you pick.")
    explanation: str = Field(
        default="", description="Why this item and not the other, from your preferences and dislikes."
    )


class UserReflection(BaseModel):
    """The user agent's updated self-description."""

    self_description: str = Field(
        description="Your updated self-description: new preferences first, then past ones kept, then "
        "dislikes. Item features only; no story of the choice."
    )


class ItemReflection(BaseModel):
    """The two item agents' updated descriptions."""

    chosen_description: str = Field(
        description="Updated description of the item the user really chose."
    )
    rejected_description: str = Field(
        description="Updated description of the item the user really passed over."
    )
