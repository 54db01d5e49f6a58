"""The similarity validator (Eq. 4-7, no LLM): embed the new pattern, fetch its top-|L| pool
neighbours by cosine, decide the strategy with Eq. 7 and choose what the semantic validator is
offered (the neighbours with s >= tau_low).

Ablations: without the similarity validator (`amem4rec_similarity=False`) every top-|L| neighbour is
offered and the new memory is stored (UPDATE and STORE; STORE only into an empty pool); without
evolution (`amem4rec_evolution=False`) the action is STORE only whatever Eq. 7 says (the scores are
still computed and traced).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.amem4rec.policy import PolicyDecision, memory_policy
from state.amem4rec.context import Amem4RecContext
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.record import memory_text
from world.vector_memo import embed_each


@dataclass(frozen=True)
class SimilarityVerdict:
    """What the similarity validator hands on."""

    vector: np.ndarray
    """e = Encode(p) of the new pattern."""
    neighbours: list[dict[str, Any]]
    """Top-|L| memories {id, score, version, behavior_explanation, pattern_description, evolution_count}."""
    decision: PolicyDecision
    """Eq. 7 over the neighbours' scores."""
    action: str
    """The strategy taken (Eq. 7's, unless an ablation fixes it)."""
    offered: list[str]
    """Ids the semantic validator may link."""
    note: str
    """One line for the blackboard."""


def validate_similarity(
    pool: MemoryPool, behavior: str, pattern: str, ctx: Amem4RecContext
) -> SimilarityVerdict:
    """Run the similarity validator for a new pattern against the pool (see the module docstring)."""
    vector = embed_each([memory_text(behavior, pattern)])[0]
    found = pool.search(vector, ctx.amem4rec_top_l)
    neighbours = [
        {
            "id": memory.id,
            "score": score,
            "version": memory.version,
            "behavior_explanation": memory.behavior_explanation,
            "pattern_description": memory.pattern_description,
            "evolution_count": memory.evolution_count,
        }
        for memory, score in found
    ]
    scores = [n["score"] for n in neighbours]
    decision = memory_policy(
        scores, ctx.amem4rec_tau_low, ctx.amem4rec_tau_high, ctx.amem4rec_p_high, ctx.amem4rec_p_low
    )
    note = f"{len(neighbours)} of {pool.size()} memories compared; Eq. 7 " + decision.explain(
        ctx.amem4rec_tau_low, ctx.amem4rec_tau_high
    )
    if not ctx.amem4rec_similarity:
        action = "update_and_store" if neighbours else "store_only"
        offered = [n["id"] for n in neighbours]
        note += (
            f"; similarity validator off: all {len(offered)} neighbours offered, {action.replace('_', ' ')}"
        )
    else:
        action = decision.action
        offered = (
            [n["id"] for n in neighbours if n["score"] >= ctx.amem4rec_tau_low] if decision.update else []
        )
    if not ctx.amem4rec_evolution:
        action, offered = "store_only", []
        note += "; evolution off: store only"
    return SimilarityVerdict(vector, neighbours, decision, action, offered, note)
