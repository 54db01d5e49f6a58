"""MemRec Stage R fallback pieces that need no categories: support edges, and facets from titles
(for catalogs whose items have a title and nothing else)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.memrec.curation import Curated
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import recency_profile
from prompts.common import quote
from state.memrec.schemas import Facet, FacetSet, SupportEdge
from tools.memrec.graph import user_node


def support_edges(curated: Curated, user_id: str) -> list[SupportEdge]:
    """Fallback support edges: every curated neighbour to the user, weighted by its curation score
    relative to the best one."""
    top_score = float(curated.scores.max()) if len(curated.scores) and curated.scores.max() > 0 else 1.0
    return [
        SupportEdge(from_=node, to=user_node(user_id), w=round(max(float(s), 0.0) / top_score, 4))
        for node, s in zip(curated.node_ids, curated.scores, strict=True)
    ]


def title_facets(
    index: FeatureIndex, curated: Curated, user_id: str, n_facets: int, visible: Sequence[str] | None = None
) -> FacetSet:
    """Fallback facets on a catalog without categories: the titles of the best-supported items.

    Items are the curated item neighbours weighted by curation score (clipped at 0), or, without
    item neighbours, the user's own visible training items weighted by edge weight; confidence is
    an item's share of the weight. ReRank matches such facets by MiniLM similarity to the
    candidates (`facet_match` embeds any facet that names no category).
    """
    if curated.is_item.any():
        rows, weights = curated.index[curated.is_item], np.clip(curated.scores[curated.is_item], 0.0, None)
        backers = [n for n, item in zip(curated.node_ids, curated.is_item, strict=True) if item]
        source = "curated neighbours"
    else:
        rows, weights = recency_profile(index, user_id, visible)
        backers, source = [], "the user's own history"
    if not len(rows):
        return FacetSet(facets=[], support_edges=support_edges(curated, user_id))
    weights = weights if weights.sum() > 0 else np.ones(len(rows))
    share = weights / weights.sum()
    items, ids = index.env.dataset.items, index.env.item_ids

    def title_of(row: int) -> str:
        return items[ids[row]].title

    facets = [
        Facet(
            facet=f"like {quote(title_of(rows[j]), 80)} (support {share[j]:.2f} from {source})",
            confidence=round(float(share[j]), 4),
            supporting_neighbors=[backers[j]] if backers else [],
        )
        for j in np.argsort(-share, kind="stable")[:n_facets]
    ]
    return FacetSet(facets=facets, support_edges=support_edges(curated, user_id))
