"""MemRec's Stage R read without running its graph or any LLM: the curated collaborative
neighbourhood of a user for a candidate set, its synthesised facets (the synthesise agent's
fallback: weighted category support) and the heuristic blend fallback's per-candidate scores (the
rerank agent's fallback over those facets), with the memory texts a prompt would quote.

The same calls, in the same order and with the same knobs, as the `curate`, `synthesise` and
`rerank` nodes of graphs/memrec/graph.py with the heuristic backend; nothing is written (no Stage W).
Reads the memory graph (SQLite or PostgreSQL) and may embed: call it off the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from agents.memrec.curation import Curated, curate, empty_curation, resolve_rule_set, rule_set_name
from agents.memrec.feature_index import feature_index
from agents.memrec.rerank import blend_of, blend_parts
from agents.memrec.synthesis import category_facets
from state.memrec.context import MemRecContext
from state.memrec.schemas import FacetSet
from tools.memrec.graph import item_node, user_node
from world.environment import Environment


@dataclass(frozen=True)
class NeighbourhoodView:
    """What MemRec's Stage R knows about one user and candidate set, without an LLM."""

    memory_name: str
    """The memory graph read (its file, or its key in the shared database)."""
    rule_set: str
    """The curation rule set's name or path."""
    curated: Curated
    """N'_k(u): the curated neighbours, best first."""
    facets: FacetSet
    """The synthesised facets (MemRec's synthesis fallback)."""
    scores: np.ndarray
    """The heuristic blend fallback's score of each candidate, in [0, 1], in candidate order."""
    parts: dict[str, np.ndarray]
    """Its three parts per candidate: facet, embedding, collaborative."""
    user_memory: str
    """The user's current memory text."""
    memories: dict[str, str]
    """Memory text of the curated item neighbours and of the candidates, by node id."""


def neighbourhood_view(
    env: Environment, ctx: MemRecContext, user_id: str, candidates: Sequence[str], visible: Sequence[str]
) -> NeighbourhoodView:
    """Curate (unless `memrec_use_read` is off), synthesise facets and score the candidates the way
    MemRec's heuristic path does; `visible` is the scenario's visible history (it limits the user's
    own 1-hop items, as in MemRec's graph)."""
    index = feature_index(env, ctx.memrec_memory)
    name = rule_set_name(ctx, env)
    if ctx.memrec_use_read:
        rule_set = resolve_rule_set(ctx, env, name)
        found = curate(
            index,
            rule_set,
            user_id,
            candidates,
            ctx.memrec_k,
            ctx.memrec_min_users,
            ctx.memrec_min_items,
            visible,
            reads_per_kept=ctx.memrec_similarity_reads or None,
            candidate_aware=ctx.memrec_curation == "candidates",
        )
    else:
        found = empty_curation()
    facets = category_facets(index, found, user_id, ctx.memrec_facets, visible)
    records = [facet.model_dump() for facet in facets.facets]
    parts = blend_parts(index, found, user_id, candidates, records, visible, index.updated_vectors())
    scores = blend_of(parts)
    items = [node for node, is_item in zip(found.node_ids, found.is_item, strict=True) if is_item]
    nodes = [*items, *(item_node(c) for c in candidates), user_node(user_id)]
    texts = {node: text for node, (text, _) in index.graph.memories(nodes).items()}
    user_memory = texts.pop(user_node(user_id), "")
    return NeighbourhoodView(index.graph.name, name, found, facets, scores, parts, user_memory, texts)
