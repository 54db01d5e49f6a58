"""Pydantic schema of a CoT trace answer for ChainRec's tool mining (`recgraph chainrec mine-tools`):
labelled reasoning steps and a final ranking. The request-specific JSON schema (ids as an enum of the
candidates, step count bounds) is derived in agents/chainrec/mining/traces.py."""

from __future__ import annotations

from pydantic import BaseModel, Field

LABEL_CHARS = 80
"""Cap on a step label (a name of a few words, not a sentence)."""
STEP_CHARS = 300
"""Cap on a step's text."""


class CotStep(BaseModel):
    """One labelled reasoning step."""

    label: str = Field(description="A short phrase (2-6 words) naming the kind of reasoning this step does.")
    text: str = Field(description="What the step looked at and found, in one or two sentences.")


class CotAnswer(BaseModel):
    """A step-labelled chain of thought and the ranking it leads to."""

    steps: list[CotStep] = Field(description="The reasoning steps, in the order they were taken.")
    ranking: list[str] = Field(
        description="Every candidate id (the text inside the square brackets), best first."
    )
