"""MemRec's Vector configuration (the paper's Table 5, all-MiniLM-L6-v2 per A.3): Stage ReRank
without LLM_Rec, by `memrec_ranker="vector"`. Per candidate c:

    s(c) = sum_f w_f cos(e_f, m_c) / sum_f w_f,  w_f = confidence of facet f

(every w_f = 1 when the confidences sum to 0), e_f the MiniLM embedding of facet f's text, m_c the
MiniLM embedding of c's current memory: the vector of the text Stage W wrote when it rewrote it,
else the catalog item's vector (`FeatureIndex.item_vectors`, which stands for the initial item
memory, as in curation's memory_similarity_score). Both are unit vectors, so the cosine is their
dot product. No facets: every score is 0. Nothing else is read (no collaborative signal, no user
memory); the ranking is s descending, ties in input order (agents/memrec/rerank.py:model_order).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from agents.memrec.feature_index import FeatureIndex
from state.memrec.schemas import CandidateScore, CandidateScores
from state.memrec.state import FacetRecord
from tools.memrec.graph import item_node
from world.embeddings import embed_texts


def memory_vectors(
    index: FeatureIndex, candidates: Sequence[str], updated: dict[str, np.ndarray]
) -> np.ndarray:
    """MiniLM embedding of each candidate's current memory (rows in candidate order): the changed
    memory's vector when Stage W rewrote it, else the catalog item's (its initial memory's stand-in)."""
    rows = np.array([index.env.item_index[c] for c in candidates], dtype=np.int64)
    vectors = np.asarray(index.item_vectors[rows], dtype=np.float64).copy()
    for i, item in enumerate(candidates):
        if item_node(item) in updated:
            vectors[i] = updated[item_node(item)]
    return vectors


def vector_config_scores(
    facet_vectors: np.ndarray, confidences: Sequence[float], candidate_vectors: np.ndarray
) -> np.ndarray:
    """The Vector configuration's score of each candidate: the confidence-weighted mean over facets of
    cos(facet, candidate memory), all weights 1 when the confidences sum to 0 (unit vectors: the
    cosine is the dot product); zeros without facets."""
    if not len(facet_vectors):
        return np.zeros(len(candidate_vectors))
    weights = np.clip(np.asarray(confidences, dtype=np.float64), 0.0, None)
    if weights.sum() <= 0:
        weights = np.ones(len(facet_vectors))
    cosines = np.asarray(facet_vectors, dtype=np.float64) @ np.asarray(candidate_vectors, dtype=np.float64).T
    return weights @ cosines / weights.sum()


def vector_configuration(
    candidates: Sequence[str], facets: Sequence[FacetRecord], candidate_vectors: np.ndarray
) -> CandidateScores:
    """The paper's Vector configuration as a `CandidateScores` answer, in candidate order;
    `candidate_vectors` from `memory_vectors` (embeds the facets' texts)."""
    facet_vectors = embed_texts([str(f["facet"]) for f in facets]) if facets else np.zeros((0, 1))
    confidences = [float(f.get("confidence", 0.0)) for f in facets]
    scores = vector_config_scores(facet_vectors, confidences, candidate_vectors)
    return CandidateScores(
        scores=[
            CandidateScore(item_id=c, score=float(s), rationale=f"vector: facet cosine {s:.3f}")
            for c, s in zip(candidates, scores, strict=True)
        ]
    )
