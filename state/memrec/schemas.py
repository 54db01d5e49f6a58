"""Pydantic schemas of MemRec's agent answers (the request-specific JSON schemas sent to the models
are derived from them in the agents: `agents.validation.constrained_schema`)."""

from __future__ import annotations

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


class NeighbourUpdate(BaseModel):
    """Stage W: one curated neighbour's memory, rewritten in the light of the interaction (Fig. 15)."""

    neighbor_id: str = Field(description="Id of one offered neighbour (e.g. i:50, u:7).")
    memory_update: str = Field(
        description="That neighbour's whole updated memory: its current memory revised with what this "
        "interaction shows (not a sentence to append)."
    )
    rationale: str = Field(default="", description="Why this neighbour is affected.")


class MemoryWrite(BaseModel):
    """Stage W's answer: new user and item memories plus updates for chosen neighbours."""

    user_memory: str = Field(
        description="The user's updated memory: their current memory, the preference facets and the new "
        "interaction synthesised."
    )
    item_memory: str = Field(description="The item's updated memory: what it is and who enjoys it.")
    neighbor_updates: list[NeighbourUpdate] = Field(
        default_factory=list,
        description="Rewritten memories of the offered neighbours this interaction concerns (as many as "
        "it warrants, up to the cap).",
    )


class InitialMemory(BaseModel):
    """The optional LM_Mem initialisation pass: a user's first memory written from their history."""

    memory: str = Field(description="A compact memory of the user's tastes, from their training history.")
