"""Turning a model's proposed ranking into a valid permutation of the candidates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.base import InvalidAnswer
from agents.validation import NO_VALID_IDS, constrained_schema, keep_known_unique, missing_ids
from state.schemas import RankedList


def repair_ranking(
    proposed: Sequence[str], candidates: Sequence[str], fallback_order: Sequence[str]
) -> tuple[list[str], list[str]]:
    """A permutation of exactly `candidates` that keeps the model's order where it is valid.

    Unknown and repeated ids are dropped; candidates the model left out are appended in
    `fallback_order`. Returns the ranking and the repair kinds applied (one entry per id).
    Raises `InvalidAnswer` when not a single proposed id is a candidate — nothing to keep.
    """
    kept, repairs = keep_known_unique(
        proposed, set(candidates), key=lambda raw: str(raw).strip(), keep=lambda item, _: item
    )
    if not kept:
        raise InvalidAnswer(
            "none of the ids in 'ranking' is a candidate; use the ids in square brackets",
            kind=NO_VALID_IDS,
        )
    missing, filled = missing_ids(kept, [*fallback_order, *candidates])
    ranking = [*kept, *missing]
    repairs += filled
    return ranking, repairs


def ranking_json_schema(candidates: Sequence[str], reason_chars: int = 200) -> dict[str, Any]:
    """`RankedList` as a JSON schema whose ids are an enum of exactly these candidates.

    Grammar-constrained decoders (llama.cpp) then cannot invent ids or run on forever.
    """
    n = len(candidates)
    return constrained_schema(
        RankedList,
        {
            "ranking": {"minItems": n, "maxItems": n},
            "ranking[]": {"enum": list(candidates)},
            "reason": {"maxLength": reason_chars},
        },
    )


def clip_score(value: float, low: float, high: float) -> tuple[float, bool]:
    """`value` clipped into [low, high], and whether clipping was needed."""
    clipped = min(max(value, low), high)
    return clipped, clipped != value
