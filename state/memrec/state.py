"""MemRec's state: the shared blackboard plus what Stage R hands to Stage ReRank."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from state.base_state import BaseState

SupportEdgeRecord = TypedDict(
    "SupportEdgeRecord",
    {"from": str, "to": str, "w": float},
)
"""One collaborative edge behind the facets: node ids `from` → `to`, weight `w` in [0, 1]
(`SupportEdge.model_dump(by_alias=True)`; `from` is a keyword, hence the functional form)."""


class CuratedRecord(TypedDict):
    """One curated neighbour of N'_k(u) as `curate` writes it (`Curated.as_records`)."""

    id: str
    """Memory-graph node id: "i:<item>" or "u:<user>"."""
    kind: Literal["item", "user"]
    """Whether the neighbour is an item or a user."""
    score: float
    """Its curation score under the rule set (rounded to 6 places)."""
    features: dict[str, float]
    """Its named curation features (`agents.memrec.rules.FEATURES`)."""


class FacetRecord(TypedDict):
    """One preference facet as `synthesise` writes it (`Facet.model_dump()`)."""

    facet: str
    """The facet phrase."""
    confidence: float
    """Confidence in [0, 1]."""
    supporting_neighbors: list[str]
    """Curated neighbour node ids that back the facet."""


class MemRecState(BaseState, total=False):
    """Blackboard of the MemRec graphs; each field below has exactly one writer."""

    rule_set: str
    """Written by `curate`: the curation rule set used (name or path)."""
    curated: list[CuratedRecord]
    """Written by `curate`: N'_k(u), best first, as {id, kind, score, features{...}}."""
    user_memory: str
    """Written by `curate`: the target user's current memory M_u (text)."""
    facets: list[FacetRecord]
    """Written by `synthesise`: N_f facets {facet, confidence, supporting_neighbors[]}."""
    support_edges: list[SupportEdgeRecord]
    """Written by `synthesise`: collaborative edges {from, to, w} behind the facets."""
    context_tokens: int
    """Written by `synthesise`: estimated tokens of the Stage R context actually shown (<= tau)."""
