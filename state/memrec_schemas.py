"""Pydantic schemas of MemRec's agent answers and the tight JSON schemas sent to the models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field


class Facet(BaseModel):
    """One preference facet of the collaborative memory M_collab."""

    facet: str = Field(description="A short phrase naming one preference of the user.")
    confidence: float = Field(description="How strongly the evidence supports it, 0 to 1.")
    supporting_neighbors: list[str] = Field(
        default_factory=list, description="Ids of the curated neighbours that support it (e.g. i:50, u:7)."
    )


class SupportEdge(BaseModel):
    """A collaborative edge between a curated neighbour and the target user."""

    from_: str = Field(alias="from", description="Source node id (a curated neighbour).")
    to: str = Field(description="Target node id (usually the user, u:<id>).")
    w: float = Field(description="Strength of the collaborative signal, 0 to 1.")

    model_config = {"populate_by_name": True}


class FacetSet(BaseModel):
    """Stage R's answer: N_f facets and the support edges behind them."""

    facets: list[Facet] = Field(description="The user's preference facets, strongest first.")
    support_edges: list[SupportEdge] = Field(
        default_factory=list, description="Collaborative edges between neighbours and the user."
    )


class CandidateScore(BaseModel):
    """Stage ReRank's judgement of one candidate."""

    item_id: str = Field(description="The candidate id (the text inside the square brackets).")
    score: float = Field(description="Relevance to the user, 0 (poor) to 1 (excellent).")
    rationale: str = Field(default="", description="One short sentence grounded in the facets.")


class CandidateScores(BaseModel):
    """Stage ReRank's answer: one score per candidate."""

    scores: list[CandidateScore] = Field(description="One entry per candidate.")


def facet_json_schema(n_facets: int, neighbour_ids: Sequence[str], user_node_id: str) -> dict[str, Any]:
    """`FacetSet` as a JSON schema: exactly `n_facets` facets, neighbour ids as an enum of the curated set."""
    ids = list(neighbour_ids)
    item = {"type": "string", "enum": ids} if ids else {"type": "string"}
    supporters = {"type": "array", "items": item, "maxItems": 8 if ids else 0}
    endpoint = {"type": "string", "enum": [*ids, user_node_id]}
    unit = {"type": "number", "minimum": 0, "maximum": 1}
    return {
        "type": "object",
        "properties": {
            "facets": {
                "type": "array",
                "minItems": n_facets,
                "maxItems": n_facets,
                "items": {
                    "type": "object",
                    "properties": {
                        "facet": {"type": "string", "maxLength": 120},
                        "confidence": unit,
                        "supporting_neighbors": supporters,
                    },
                    "required": ["facet", "confidence", "supporting_neighbors"],
                    "additionalProperties": False,
                },
            },
            "support_edges": {
                "type": "array",
                "maxItems": len(ids),
                "items": {
                    "type": "object",
                    "properties": {"from": endpoint, "to": endpoint, "w": unit},
                    "required": ["from", "to", "w"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["facets", "support_edges"],
        "additionalProperties": False,
    }


def scores_json_schema(candidates: Sequence[str], rationale_chars: int = 160) -> dict[str, Any]:
    """`CandidateScores` as a JSON schema: one object per candidate, ids an enum of the candidates."""
    return {
        "type": "object",
        "properties": {
            "scores": {
                "type": "array",
                "minItems": len(candidates),
                "maxItems": len(candidates),
                "items": {
                    "type": "object",
                    "properties": {
                        "item_id": {"type": "string", "enum": list(candidates)},
                        "score": {"type": "number", "minimum": 0, "maximum": 1},
                        "rationale": {"type": "string", "maxLength": rationale_chars},
                    },
                    "required": ["item_id", "score", "rationale"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["scores"],
        "additionalProperties": False,
    }


class NeighbourUpdate(BaseModel):
    """Stage W: what one curated neighbour should remember about the interaction."""

    neighbor_id: str = Field(description="Id of one offered neighbour (e.g. i:50, u:7).")
    memory_update: str = Field(description="One sentence to add to that neighbour's memory.")
    rationale: str = Field(default="", description="Why this neighbour is affected.")


class MemoryWrite(BaseModel):
    """Stage W's answer: new user and item memories plus updates for chosen neighbours."""

    user_memory: str = Field(description="The user's rewritten memory, including the new interaction.")
    item_memory: str = Field(description="The item's rewritten memory, noting who chose it.")
    neighbor_updates: list[NeighbourUpdate] = Field(
        default_factory=list, description="Updates for at most fanout_cap of the offered neighbours."
    )


def write_json_schema(neighbour_ids: Sequence[str]) -> dict[str, Any]:
    """`MemoryWrite` as a JSON schema: neighbour ids an enum of the offered ones.

    Lengths are bounded by validation, not here: llama.cpp turns `maxLength` into a repetition
    grammar that makes constrained decoding of long strings very slow."""
    ids = list(neighbour_ids)
    return {
        "type": "object",
        "properties": {
            "user_memory": {"type": "string", "minLength": 1},
            "item_memory": {"type": "string", "minLength": 1},
            "neighbor_updates": {
                "type": "array",
                "maxItems": len(ids),
                "items": {
                    "type": "object",
                    "properties": {
                        "neighbor_id": {"type": "string", "enum": ids} if ids else {"type": "string"},
                        "memory_update": {"type": "string", "minLength": 1},
                        "rationale": {"type": "string"},
                    },
                    "required": ["neighbor_id", "memory_update", "rationale"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["user_memory", "item_memory", "neighbor_updates"],
        "additionalProperties": False,
    }


class InitialMemory(BaseModel):
    """The optional LM_Mem initialisation pass: a user's first memory written from their history."""

    memory: str = Field(description="A compact memory of the user's tastes, from their training history.")
