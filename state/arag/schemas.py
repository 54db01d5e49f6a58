"""Pydantic schemas of the ARAG agents' answers (what each agent must return as JSON).

NLI scores use one scale everywhere: 0–10, where 0 means the item's text contradicts the
user's intent, 5 means it neither supports nor contradicts it, and 10 means it clearly
supports it. Bounds are not enforced by the schemas: out-of-range scores are clipped (and
counted as repairs) by the agents' validation.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

NLI_MIN = 0.0
"""Lowest NLI score: the item's text contradicts the inferred intent."""
NLI_MAX = 10.0
"""Highest NLI score: the item's text clearly supports the inferred intent."""


class UserSummary(BaseModel):
    """The user understanding agent's S_user."""

    long_term: str = Field(description="The user's lasting preferences, from the long-term history.")
    session_intent: str = Field(description="What the user seems to want right now, from the session.")

    def text(self) -> str:
        """S_user as one blackboard text."""
        return f"Long-term preferences: {self.long_term}\nCurrent intent: {self.session_intent}"


class NliJudgment(BaseModel):
    """How strongly one item's text supports the user's inferred intent."""

    item_id: str = Field(description="The item's id (the text inside the square brackets).")
    score: float = Field(description="0 = contradicts the intent, 5 = neutral, 10 = clearly supports it.")
    justification: str = Field(default="", description="A few words on why.")


class NliJudgments(BaseModel):
    """The NLI agent's batched answer: one judgment per recalled item."""

    judgments: list[NliJudgment] = Field(description="One entry per candidate item, each id once.")


class ContextSummary(BaseModel):
    """The context summary agent's S_ctx."""

    summary: str = Field(description="What the accepted items have in common that matters to this user.")


class ItemRationale(BaseModel):
    """Why one item got its place."""

    item_id: str = Field(description="The item's id (the text inside the square brackets).")
    reason: str = Field(description="A few words on its fit with the user.")


class ExplainedRanking(BaseModel):
    """The item ranker agent's answer: a full permutation with its explanation."""

    ranking: list[str] = Field(
        description="Every candidate id (the text inside the square brackets), best first, each once."
    )
    rationales: list[ItemRationale] = Field(default_factory=list, description="A short reason per item.")
    explanation: str = Field(default="", description="One or two sentences on what drove the order.")
