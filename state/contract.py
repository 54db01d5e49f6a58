"""The one input/output contract every graph shares (`RecInput` -> `RecOutput`)."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from typing_extensions import TypedDict

from state.blackboard import BlackboardMessage, append_messages
from state.degraded import merge_degraded
from world.errors import InvalidRecInput
from world.scenarios import SCENARIOS, Scenario

__all__ = ["SCENARIOS", "InvalidRecInput", "RecInput", "RecOutput", "Scenario"]


class RecInput(BaseModel):
    """What a caller gives any recommender graph."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(description="The user to recommend for (an id of the context's dataset).")
    candidates: list[str] | None = Field(
        default=None,
        description="Item ids to re-rank. Omit to retrieve candidates from the whole catalog.",
    )
    instruction: str | None = Field(
        default=None, description="Optional natural-language request from the user."
    )
    scenario: Scenario = Field(
        default="classic", description="Which part of the user's history the method may see."
    )

    @field_validator("user_id", mode="before")
    @classmethod
    def _user_id_as_text(cls, value: object) -> object:
        """Accept integer ids from Python callers; ids are tokens."""
        return str(value) if isinstance(value, int) else value

    @field_validator("candidates", mode="before")
    @classmethod
    def _candidates_as_text(cls, value: object) -> object:
        """Accept integer item ids too."""
        if isinstance(value, list):
            return [str(v) if isinstance(v, int) else v for v in value]
        return value

    @field_validator("candidates")
    @classmethod
    def _candidates_well_formed(cls, value: list[str] | None) -> list[str] | None:
        """A candidate list, when given, is non-empty and has no duplicates."""
        if value is None:
            return value
        if not value:
            raise ValueError("candidates is an empty list; omit it to retrieve from the catalog")
        seen: set[str] = set()
        for item_id in value:
            if item_id in seen:
                raise ValueError(f"duplicate candidate item id {item_id!r}")
            seen.add(item_id)
        return value


class RecOutput(TypedDict, total=False):
    """What every graph returns."""

    ranking: list[str]
    """A permutation of exactly the candidate ids, best first."""
    scores: dict[str, float]
    """Per-item score when the method produces one."""
    rationales: dict[str, str]
    """Per-item explanation when the method produces one."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """The blackboard messages of this run, in posting order."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """One record per agent invocation: calls, tokens, cost, latency, repairs, fallback."""
    degraded: Annotated[list[str], merge_degraded]
    """Features switched off for lack of a dataset field (`feature: reason`), written by the node that
    switched each off (state.degraded); absent when the dataset has every field the method uses."""
    details: dict[str, Any]
    """Method-specific per-user figures (e.g. planning steps, tools used); the benchmark stores them
    in results.jsonl and summarises them in metrics.json (numbers averaged, string lists counted)."""
