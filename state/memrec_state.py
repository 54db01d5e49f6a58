"""MemRec's state: the shared blackboard plus what Stage R hands to Stage ReRank."""

from __future__ import annotations

from typing import Any

from state.base_state import BaseState


class MemRecState(BaseState, total=False):
    """Blackboard of the MemRec graphs; each field below has exactly one writer."""

    rule_set: str
    """Written by `curate`: the curation rule set used (name or path)."""
    curated: list[dict[str, Any]]
    """Written by `curate`: N'_k(u), best first, as {id, kind, score, features{...}}."""
    user_memory: str
    """Written by `curate`: the target user's current memory M_u (text)."""
    facets: list[dict[str, Any]]
    """Written by `synthesise`: N_f facets {facet, confidence, supporting_neighbors[]}."""
    support_edges: list[dict[str, Any]]
    """Written by `synthesise`: collaborative edges {from, to, w} behind the facets."""
    context_tokens: int
    """Written by `synthesise`: estimated tokens of the Stage R context actually shown (<= tau)."""
