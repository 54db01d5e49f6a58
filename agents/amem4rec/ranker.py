"""Memory-augmented ranking (Section 3.5): ONE call of the ranker ("rec" role) orders every
candidate from the user's recent history (most recent first), the K retrieved memories and the
candidates: {ranked_item_ids, reasoning}. The answer is repaired into a permutation of exactly the
candidates (`agents.ranking.repair_ranking`, missing ids appended in the seeded left-out order).

Fallback: per candidate c with MiniLM item vector v_c,
    score(c) = (w_h * cos(v_c, mean of the recent history's vectors)
              + w_m * cos(v_c, retrieval-weighted mean of the retrieved memories' embeddings)) / (w_h + w_m)
with w_h = `Context.amem4rec_history_weight`, w_m = `Context.amem4rec_memory_weight`; a part without signal
(no history, no memory) is left out and the weights renormalised; with neither, training
popularity. Ties keep the candidates' order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import AgentTask
from agents.ranking import repair_ranking
from agents.validation import constrained_schema
from prompts.amem4rec import ranking_messages
from prompts.evidence import candidates_evidence, shown_history
from state.amem4rec.context import Amem4RecContext
from state.amem4rec.schemas import MemoryRanking
from tools.similarity import profile_vector, rank_by_scores
from world.environment import Environment


@dataclass
class RankerCall:
    """The ranker's task and its fallback scores (which also order the candidates an answer omits)."""

    task: AgentTask[MemoryRanking]
    """The agent task."""
    scores: dict[str, float]
    """Fallback score per candidate."""


def fallback_scores(
    env: Environment,
    recent: Sequence[str],
    memory_vectors: np.ndarray,
    memory_scores: Sequence[float],
    candidates: Sequence[str],
    ctx: Amem4RecContext,
) -> np.ndarray:
    """The fallback's score per candidate (see the module docstring)."""
    items = env.item_vectors()[[env.item_index[c] for c in candidates]].astype(np.float64)
    parts: list[tuple[float, np.ndarray]] = []
    profile = profile_vector(env, list(recent))
    if profile is not None:
        parts.append((ctx.amem4rec_history_weight, items @ profile))
    if len(memory_vectors):
        weights = np.clip(np.asarray(memory_scores, dtype=np.float64), 0.0, None)
        weights = weights if weights.sum() > 0 else np.ones(len(memory_vectors))
        centre = weights @ np.asarray(memory_vectors, dtype=np.float64) / weights.sum()
        parts.append((ctx.amem4rec_memory_weight, items @ centre))
    total = sum(weight for weight, _ in parts)
    if not parts or total <= 0:
        return np.array([float(env.popularity.get(c, 0)) for c in candidates])
    return sum(weight * part for weight, part in parts) / total


def ranker_call(
    env: Environment,
    ctx: Amem4RecContext,
    history: Sequence[str],
    memories: Sequence[Mapping[str, Any]],
    memory_vectors: np.ndarray,
    candidates: Sequence[str],
    *,
    user_id: str | None = None,
    instruction: str | None = None,
) -> RankerCall:
    """The ranker's task for one user: the visible history (the evidence contract's
    `history_items`), retrieved memories, every candidate with its text and the request line.
    The fallback and the memory query read the `amem4rec_recent_items` most recent items."""
    recent = list(history[-ctx.amem4rec_recent_items :]) if ctx.amem4rec_recent_items > 0 else list(history)
    scores = fallback_scores(env, recent, memory_vectors, [m["score"] for m in memories], candidates, ctx)
    order = rank_by_scores(list(candidates), scores)
    by_item = {c: float(s) for c, s in zip(candidates, scores, strict=True)}
    shown = candidates_evidence(env, candidates, ctx, user_id=user_id, instruction=instruction)
    messages = ranking_messages(env.dataset, shown_history(history, ctx), memories, shown)

    def validate(answer: MemoryRanking) -> tuple[MemoryRanking, list[str]]:
        ranking, repairs = repair_ranking(answer.ranked_item_ids, candidates)
        return MemoryRanking(
            ranked_item_ids=ranking, reasoning=" ".join(answer.reasoning.split())[:240]
        ), repairs

    def fallback() -> MemoryRanking:
        reasoning = (
            f"fallback: cosine to the recent history (weight {ctx.amem4rec_history_weight}) and to "
            f"{len(memories)} retrieved memories (weight {ctx.amem4rec_memory_weight})"
        )
        return MemoryRanking(ranked_item_ids=order, reasoning=reasoning)

    n = len(candidates)
    schema = constrained_schema(
        MemoryRanking,
        {
            "ranked_item_ids": {"minItems": n, "maxItems": n},
            "ranked_item_ids[]": {"enum": list(candidates)},
            "reasoning": {"maxLength": 240},
        },
    )
    task = AgentTask(
        agent="rank",
        role="rec",
        messages=messages,
        schema=MemoryRanking,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
        ranked_ids=lambda answer: answer.ranked_item_ids,
    )
    return RankerCall(task, by_item)
