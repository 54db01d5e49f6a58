"""MemRec Stage ReRank: LLM_Rec ("rec" role) scores every candidate from the request, the facets and
the candidates' memories (Eq. 4); the ranking is the model's scores, descending, and nothing else.

Ranking rule of a model's answer (`model_order`), using no collaborative or embedding signal:
1. score, descending;
2. equal scores: the order the model listed them in;
3. candidates the model left out: after every scored one (score 0 in the output), in
   `agents.ranking.left_out_order` (the one rule of every LLM ranker).
Every position of a candidate the model scored is the model's own (`AgentUsage.model_ids`, hence
`model_share`): its score, or within a tie its own listing, places it. Left-out candidates are
placed by the rule and counted as such ("repair" in `ranking_origin`); `tied_ids` names the scored
candidates whose order only the model's listing decided (the rerank post reports both counts).

`memrec_ranker="vector"`: the paper's Vector configuration, no LLM_Rec: MiniLM cosine between the
facets and each candidate's memory, nothing else (agents/memrec/vector_config.py).

Heuristic blend fallback (ours, not the paper's): what answers when no model does (the heuristic
backend, or LLM_Rec failed after retries) under `memrec_ranker="llm"`. `blend_parts`, three parts
in [0, 1]:
- facet match: sum_f conf_f * m_f(c) / sum_f conf_f, where m_f(c) is 1/0 when the facet names
  dataset categories (does c have one of them) and otherwise the clipped MiniLM cosine between the
  facet text and the item;
- embedding similarity: the mean of two clipped cosines of c, with the curation-weighted mean of
  the curated item neighbours (the user's own recency-weighted items when nothing was curated)
  and with the embedding of the user's current memory M_u (which Stage W keeps up to date);
- collaborative signal: the mean of (a) the curation-weighted share of curated user neighbours
  who interacted with c and (b) the curation-weighted item-item co-occurrence cosine between the
  curated item neighbours and c, each divided by its maximum over the candidates.
score (`blend_of`) = (0.25 facet + 0.25 embedding + 0.5 collaborative) / (sum of the weights of
parts that carry any signal for this user); ties by the same blend without the facet part, then
input order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

import numpy as np

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.collaborative import cosine_cooccurrence, interacted, mean_unit
from agents.memrec.curation import Curated
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import recency_profile
from agents.memrec.write import facet_lines
from agents.ranking import clip_score, left_out_order
from agents.validation import (
    NO_VALID_IDS,
    SCORE_CLIPPED,
    constrained_schema,
    keep_known_unique,
    missing_ids,
)
from prompts import memrec as prompts
from prompts.common import CANDIDATES_HEADER, quote
from state.memrec.schemas import CandidateScore, CandidateScores
from state.memrec.state import FacetRecord
from world.embeddings import embed_texts
from world.environment import Environment

BLEND_WEIGHTS = {"facet": 0.25, "embedding": 0.25, "collaborative": 0.5}
"""Weights of the heuristic blend fallback's three parts (renormalised over parts with signal)."""
MEMORY_CHARS = 220
"""Candidate memories are cut to this many characters in the ReRank prompt."""
LEFT_OUT = "(not scored by the model: placed after the scored candidates, in input order)"
"""Rationale of a candidate the model's answer left out."""


@cache
def embedder_loaded() -> None:
    """Load MiniLM once (from a worker thread: the ReRank fallback may then embed on the loop)."""
    embed_texts(["facet"])


def _category_pattern(index: FeatureIndex) -> re.Pattern[str] | None:
    names = sorted(index.categories, key=len, reverse=True)
    if not names:
        return None
    return re.compile(r"\b(" + "|".join(re.escape(n.lower()) for n in names) + r")\b")


def facet_match(index: FeatureIndex, facets: Sequence[FacetRecord], rows: np.ndarray) -> np.ndarray:
    """Confidence-weighted match of each candidate row with the facets (zeros without facets)."""
    confidences = np.array([float(f.get("confidence", 0.0)) for f in facets])
    if not len(facets) or confidences.sum() <= 0:
        return np.zeros(len(rows))
    pattern = index.env.resource("memrec_category_pattern", lambda: _category_pattern(index))
    column = {c.lower(): j for j, c in enumerate(index.categories)}
    matches, free = np.zeros((len(facets), len(rows))), []
    for k, facet in enumerate(facets):
        named = {column[m] for m in pattern.findall(str(facet["facet"]).lower())} if pattern else set()
        if named:
            matches[k] = index.item_categories[np.ix_(rows, sorted(named))].max(axis=1)
        else:
            free.append(k)
    if free:
        vectors = embed_texts([str(facets[k]["facet"]) for k in free]).astype(np.float64)
        matches[free] = np.clip(vectors @ index.item_vectors[rows].T, 0.0, 1.0)
    return confidences @ matches / confidences.sum()


def _share(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted mean of rows, scaled by its maximum over the candidates (zeros without signal)."""
    if not len(weights) or weights.sum() <= 0:
        return np.zeros(values.shape[1])
    mean = weights @ values / weights.sum()
    top = mean.max() if mean.size else 0.0
    return mean / top if top > 0 else np.zeros_like(mean)


def blend_parts(
    index: FeatureIndex,
    curated: Curated,
    user_id: str,
    candidates: Sequence[str],
    facets: Sequence[FacetRecord],
    visible: Sequence[str] | None = None,
    updated: dict[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """The heuristic blend fallback's three parts per candidate (module docstring), each in [0, 1]:
    facet, embedding, collaborative; `blend_of` blends them. `updated`: changed memories' vectors
    already read (`FeatureIndex.updated_vectors`); None reads them (a SQLite query: a caller on an
    event loop reads them first, in a worker thread)."""
    env = index.env
    rows = np.array([env.item_index[c] for c in candidates], dtype=np.int64)
    weights = np.clip(curated.scores, 0.0, None)
    items, item_w = curated.index[curated.is_item], weights[curated.is_item]
    users, user_w = curated.index[~curated.is_item], weights[~curated.is_item]
    profile = mean_unit(index.item_vectors[items], item_w)
    if profile is None:
        own, own_w = recency_profile(index, user_id, visible)
        profile = mean_unit(index.item_vectors[own], own_w)
    embedding = (
        np.clip(index.item_vectors[rows] @ profile, 0.0, 1.0) if profile is not None else np.zeros(len(rows))
    )
    memory = index.user_vector(user_id, index.updated_vectors() if updated is None else updated)
    embedding = 0.5 * embedding + 0.5 * np.clip(index.item_vectors[rows] @ memory, 0.0, 1.0)
    by_users = _share(interacted(index, users, rows), user_w) if len(users) else None
    by_items = _share(cosine_cooccurrence(index, items, candidates), item_w) if len(items) else None
    present = [p for p in (by_users, by_items) if p is not None]
    collaborative = np.mean(present, axis=0) if present else np.zeros(len(rows))
    return {
        "facet": facet_match(index, facets, rows),
        "embedding": embedding,
        "collaborative": collaborative,
    }


def blend_of(parts: dict[str, np.ndarray], without: str | None = None) -> np.ndarray:
    """The blend (in [0, 1]) of `parts` by `BLEND_WEIGHTS`, renormalised over the parts with signal;
    `without`: a part left out (the tie-break is the blend without its facet part)."""
    used = {name: BLEND_WEIGHTS[name] for name, part in parts.items() if part.any() and name != without}
    total = sum(used.values()) or 1.0
    length = len(next(iter(parts.values())))
    score = sum(used[name] * parts[name] for name in used) / total if used else np.zeros(length)
    return np.clip(score, 0.0, 1.0)


def blend_answer(
    candidates: Sequence[str], scores: np.ndarray, parts: dict[str, np.ndarray]
) -> CandidateScores:
    """The heuristic blend fallback as a `CandidateScores` answer with per-part rationales."""
    entries = []
    for i, item in enumerate(candidates):
        why = ", ".join(f"{name} {part[i]:.2f}" for name, part in parts.items())
        entries.append(
            CandidateScore(
                item_id=item, score=round(float(scores[i]), 6), rationale=f"heuristic blend: {why}"
            )
        )
    return CandidateScores(scores=entries)


def rank_blend(candidates: Sequence[str], scores: dict[str, float], tie_break: dict[str, float]) -> list[str]:
    """The heuristic blend fallback's ranking: score desc, then the tie-break blend desc, then input order."""
    position = {c: i for i, c in enumerate(candidates)}
    return sorted(candidates, key=lambda c: (-scores[c], -tie_break[c], position[c]))


def scores_json_schema(candidates: Sequence[str], rationale_chars: int = 160) -> dict[str, Any]:
    """`CandidateScores` as a JSON schema: one object per candidate, ids an enum of the candidates."""
    n = len(candidates)
    return constrained_schema(
        CandidateScores,
        {
            "scores": {"minItems": n, "maxItems": n},
            "scores[].item_id": {"enum": list(candidates)},
            "scores[].score": {"minimum": 0, "maximum": 1},
            "scores[].rationale": {"maxLength": rationale_chars},
        },
    )


def model_order(answer: CandidateScores) -> list[str]:
    """The ranking rule of an answer (module docstring): score desc, then the answer's own order
    (a validated answer lists the model's entries as the model did, then the left-out ones in input
    order); nothing else is read."""
    position = {entry.item_id: i for i, entry in enumerate(answer.scores)}
    return sorted(position, key=lambda item: (-answer.scores[position[item]].score, position[item]))


def tied_ids(answer: CandidateScores) -> list[str]:
    """Ids of a validated answer's scored entries that share their score with another scored entry:
    the ones the model's listing order, not its scores, placed (left-out entries are not counted)."""
    scored = [entry for entry in answer.scores if entry.rationale != LEFT_OUT]
    counts: dict[float, int] = {}
    for entry in scored:
        counts[entry.score] = counts.get(entry.score, 0) + 1
    return [entry.item_id for entry in scored if counts[entry.score] > 1]


def validate_scores(answer: CandidateScores, candidates: Sequence[str]) -> tuple[CandidateScores, list[str]]:
    """Keep candidate ids once each (unknown/duplicates dropped) in the model's order, clip scores,
    and append the candidates it left out (score 0, in `agents.ranking.left_out_order`)."""
    repairs: list[str] = []

    def clipped(item: str, entry: CandidateScore) -> CandidateScore:
        score, was_clipped = clip_score(float(entry.score), 0.0, 1.0)
        repairs.extend([SCORE_CLIPPED] if was_clipped else [])
        return CandidateScore(item_id=item, score=score, rationale=" ".join(entry.rationale.split()))

    kept, dropped = keep_known_unique(
        answer.scores, set(candidates), key=lambda e: str(e.item_id).strip(), keep=clipped
    )
    repairs += dropped
    if not kept:
        raise InvalidAnswer("no entry names a candidate; use the ids in square brackets", kind=NO_VALID_IDS)
    missing, filled = missing_ids(kept, left_out_order(candidates))
    repairs += filled
    left_out = [CandidateScore(item_id=item, score=0.0, rationale=LEFT_OUT) for item in missing]
    return CandidateScores(scores=[*kept.values(), *left_out]), repairs


def candidate_memories(candidates: Sequence[str], memories: dict[str, str], env: Environment) -> str:
    """The candidate list with each candidate's memory (cut), under the shared header."""
    lines = [CANDIDATES_HEADER]
    for item in candidates:
        text = memories.get(f"i:{item}", env.dataset.items[item].title)
        lines.append(f"[{item}] {quote(text, MEMORY_CHARS)}")
    return "\n".join(lines)


def rerank_task(
    env: Environment,
    candidates: Sequence[str],
    instruction: str | None,
    user_memory: str,
    facets: Sequence[FacetRecord],
    memories: dict[str, str],
    fallback: Callable[[], CandidateScores],
) -> AgentTask[CandidateScores]:
    """The Stage ReRank agent task for one user; `fallback` computes the answer used when no model
    answers (only when it is needed: it may embed free-text facets)."""
    messages = prompts.RERANK.format_messages(
        instruction=quote(instruction) if instruction else prompts.NO_INSTRUCTION,
        user_memory=quote(user_memory) if user_memory else "(empty)",
        facets=facet_lines(facets),
        candidates=candidate_memories(candidates, memories, env),
    )

    def validate(answer: CandidateScores) -> tuple[CandidateScores, list[str]]:
        return validate_scores(answer, candidates)

    return AgentTask(
        agent="rerank",
        role="rec",
        messages=messages,
        schema=CandidateScores,
        validate=validate,
        fallback=fallback,
        json_schema=scores_json_schema(candidates),
        ranked_ids=lambda answer: [entry.item_id for entry in answer.scores],
    )
