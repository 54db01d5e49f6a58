"""ARAG's item ranker agent (IRA): S_user + S_ctx + the recall set -> a full permutation.

The fallback (no LLM, or every attempt failed) ranks by the fusion documented in
`agents.arag.signals` (NLI score and similarity to the session). An LLM ranking that leaves ids
out is repaired by `agents.ranking.LEFT_OUT_RULE`, the rule of every LLM ranker: the ids the model
placed keep its order, and the ones it left out follow in a random order seeded by the candidate
set, no score involved. Each appended id is a "repair" position in `model_share`, never the model's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agents.arag.signals import NEUTRAL_SCORE, fused_scores, session_similarity
from agents.base import AgentTask
from agents.ranking import repair_ranking
from agents.validation import (
    RATIONALE_DUPLICATE_ID,
    RATIONALE_UNKNOWN_ID,
    constrained_schema,
    keep_known_unique,
)
from prompts import arag as prompts
from prompts.common import quote
from prompts.evidence import candidates_evidence
from state.arag.context import AragContext
from state.arag.schemas import ExplainedRanking, ItemRationale
from tools.similarity import rank_by_scores
from world.environment import Environment

REASON_CHARS = 80
"""Cap on one item's rationale."""


@dataclass
class RankerTask:
    """The IRA's agent task and the fallback fusion behind it."""

    task: AgentTask[ExplainedRanking]
    """The agent task."""
    fused: dict[str, float]
    """The fallback fusion score per item (the ranking's scores when the fallback ranks)."""


def ranker_json_schema(items: Sequence[str]) -> dict[str, Any]:
    """`ExplainedRanking` with ids as an enum of exactly the recall set."""
    ids, n = {"enum": list(items)}, len(items)
    return constrained_schema(
        ExplainedRanking,
        {
            "ranking": {"minItems": n, "maxItems": n},
            "ranking[]": ids,
            "rationales": {"maxItems": n},
            "rationales[].item_id": ids,
            "rationales[].reason": {"maxLength": REASON_CHARS},
            "explanation": {"maxLength": 300},
        },
    )


def context_for_prompt(context_summary: str | None, nli: dict[str, float] | None) -> str:
    """What the IRA is told about the candidates: S_ctx, else the raw NLI scores, else nothing."""
    if context_summary:
        return quote(context_summary)
    if nli:
        scores = ", ".join(f"{item}: {score:.1f}" for item, score in nli.items())
        return f"(no summary) support of each candidate for the user's intent, 0–10: {scores}"
    return "(no context summary: rank from the user profile alone)"


def keep_rationales(
    rationales: Sequence[ItemRationale], items: Sequence[str]
) -> tuple[list[ItemRationale], list[str]]:
    """Rationales of known items, first one per item; repair kinds for the rest."""
    kept, repairs = keep_known_unique(
        rationales,
        set(items),
        key=lambda r: r.item_id.strip(),
        keep=lambda item, r: ItemRationale(item_id=item, reason=r.reason),
        unknown=RATIONALE_UNKNOWN_ID,
        duplicate=RATIONALE_DUPLICATE_ID,
    )
    return list(kept.values()), repairs


def item_ranker_task(
    env: Environment,
    ctx: AragContext,
    history: Sequence[str],
    items: Sequence[str],
    user_summary: str,
    context_summary: str | None,
    nli: dict[str, float] | None,
    *,
    user_id: str | None = None,
    instruction: str | None = None,
) -> RankerTask:
    """IRA: rank every recall item from the blackboard's S_user and S_ctx, the candidates and the
    request line as the evidence contract shows them (`prompts.evidence`)."""
    scores, basis = fused_scores(env, history, items, ctx.arag_session_items, nli)
    order = rank_by_scores(items, scores)
    session = session_similarity(env, history, items, ctx.arag_session_items)
    messages = prompts.ITEM_RANKER.format_messages(
        user_summary=quote(user_summary),
        context_summary=context_for_prompt(context_summary, nli),
        candidates=candidates_evidence(env, items, ctx, user_id=user_id, instruction=instruction),
    )

    def reason(position: int, item: str) -> str:
        parts = []
        if nli is not None:
            score = nli.get(item, NEUTRAL_SCORE)
            verdict = "accepted" if score >= ctx.arag_nli_threshold else "below θ"
            parts.append(f"NLI {score:.1f}/10 ({verdict})")
        if session is not None:
            parts.append(f"session similarity {session[position]:.2f}")
        return ", ".join(parts) or "ranked by popularity (no history)"

    def validate(answer: ExplainedRanking) -> tuple[ExplainedRanking, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, items)
        rationales, rationale_repairs = keep_rationales(answer.rationales, items)
        return ExplainedRanking(
            ranking=ranking, rationales=rationales, explanation=answer.explanation
        ), repairs + rationale_repairs

    def fallback() -> ExplainedRanking:
        rationales = [ItemRationale(item_id=i, reason=reason(p, i)) for p, i in enumerate(items)]
        return ExplainedRanking(ranking=order, rationales=rationales, explanation=f"ranked by {basis}")

    task = AgentTask(
        agent="item_ranker",
        role="rec",
        messages=messages,
        schema=ExplainedRanking,
        validate=validate,
        fallback=fallback,
        json_schema=ranker_json_schema(items),
        ranked_ids=lambda answer: answer.ranking,
    )
    return RankerTask(task, {i: round(float(s), 4) for i, s in zip(items, scores, strict=True)})
