"""ARAG's four agents as `AgentTask`s: prompt, typed answer, validation/repair, fallback.

- user_understanding (UUA): S_user; fallback `extractive_user_summary`.
- nli (batched) / nli_item (per item): s_NLI on 0–10 with a justification; scores outside
  the scale are clipped and counted; fallback `heuristic_nli` (cosine to the intent plus
  era fit, rescaled).
- context_summary (CSA): S_ctx over I⁺ = {i : s_NLI ≥ θ} (every item, unweighted, without
  NLI); fallback `extractive_context_summary`.
- item_ranker (IRA): a full permutation with rationales; repaired with `repair_ranking`
  against the fallback order, the fusion in `agents.arag.signals.fused_scores`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from agents.arag.extractive import extractive_context_summary, extractive_user_summary
from agents.arag.signals import (
    NEUTRAL_SCORE,
    category_weights,
    format_weights,
    heuristic_nli,
    split_context,
)
from agents.base import AgentTask, InvalidAnswer
from agents.ranking import clip_score
from agents.validation import (
    EMPTY_ANSWER,
    INVALID_SCORE,
    NO_VALID_IDS,
    SCORE_CLIPPED,
    constrained_schema,
    keep_known_unique,
    missing_ids,
)
from prompts import arag as prompts
from prompts.common import item_block, item_line, quote
from prompts.evidence import candidates_evidence, item_text, shown_history
from state.arag.context import AragContext
from state.arag.schemas import NLI_MAX, NLI_MIN, ContextSummary, NliJudgment, NliJudgments, UserSummary
from world.environment import Environment

JUSTIFICATION_CHARS = 80
"""Cap on an NLI justification (keeps a batched answer well inside the token budget)."""


def _judgment_constraints(items: Sequence[str], prefix: str = "") -> dict[str, dict[str, Any]]:
    """Ids an enum of `items`, scores on the NLI scale, justifications bounded."""
    return {
        f"{prefix}item_id": {"enum": list(items)},
        f"{prefix}score": {"minimum": NLI_MIN, "maximum": NLI_MAX},
        f"{prefix}justification": {"maxLength": JUSTIFICATION_CHARS},
    }


def user_understanding_task(
    env: Environment, ctx: AragContext, history: Sequence[str]
) -> AgentTask[UserSummary]:
    """UUA: summarise long-term tastes and the session's intent."""
    long_term, session = split_context(history, ctx.arag_session_items)
    shown = shown_long_term(ctx, long_term, session)
    messages = prompts.USER_UNDERSTANDING.format_messages(
        long_term_count=len(shown),
        long_term_total=len(long_term),
        long_term=item_block(env.dataset, shown),
        session_count=len(session),
        session=item_block(env.dataset, session),
    )
    extractive = extractive_user_summary(env.dataset, long_term, session)

    def validate(answer: UserSummary) -> tuple[UserSummary, list[str]]:
        long_text, intent = answer.long_term.strip(), answer.session_intent.strip()
        if not long_text and not intent:
            raise InvalidAnswer("both 'long_term' and 'session_intent' are empty", kind=EMPTY_ANSWER)
        repairs = ["empty_field"] * ((not long_text) + (not intent))
        return UserSummary(
            long_term=long_text or extractive.long_term, session_intent=intent or extractive.session_intent
        ), repairs

    schema = constrained_schema(
        UserSummary, {"long_term": {"maxLength": 400}, "session_intent": {"maxLength": 300}}
    )
    return AgentTask(
        agent="user_understanding",
        role="rec",
        messages=messages,
        schema=UserSummary,
        validate=validate,
        fallback=lambda: extractive,
        json_schema=schema,
    )


def shown_long_term(ctx: AragContext, long_term: Sequence[str], session: Sequence[str]) -> list[str]:
    """The part of C_lt the prompts list: its latest items, so that C_lt and C_st together show at
    most the evidence contract's `history_items` (all when 0; `prompts.evidence.shown_history`)."""
    if ctx.history_items <= 0:
        return list(long_term)
    room = max(ctx.history_items - len(session), 0)
    return shown_history(long_term, ctx, room) if room else []


def _nli_messages(
    env: Environment, ctx: AragContext, history: Sequence[str], items: Sequence[str], batched: bool
) -> list[Any]:
    """The NLI prompt: u = (C_lt, C_st) as item lists (C_lt bounded, with its category shares) and
    the items to judge with their text T(i)."""
    long_term, session = split_context(history, ctx.arag_session_items)
    shown = shown_long_term(ctx, long_term, session)
    sketch = format_weights(category_weights(env.dataset, long_term)) if long_term else "unknown"
    template = prompts.NLI_BATCHED if batched else prompts.NLI_PER_ITEM
    return template.format_messages(
        long_term_count=len(shown),
        long_term_total=len(long_term),
        long_term=item_block(env.dataset, shown),
        categories=quote(sketch),
        session=item_block(env.dataset, session),
        candidates=candidates_evidence(env, items, ctx, use_instruction=False),
    )


def _checked_score(value: float, repairs: list[str]) -> float | None:
    """The score clipped into the scale (None when it is not a finite number)."""
    if not math.isfinite(value):
        return None
    score, clipped = clip_score(value, NLI_MIN, NLI_MAX)
    if clipped:
        repairs.append(SCORE_CLIPPED)
    return score


def nli_task(
    env: Environment, ctx: AragContext, history: Sequence[str], items: Sequence[str]
) -> AgentTask[NliJudgments]:
    """NLI agent, batched: one answer judges every item of the recall set."""
    heuristic = heuristic_nli(env, history, items, ctx.arag_session_items)

    def judged(item: str) -> NliJudgment:
        score, reason = heuristic[item]
        return NliJudgment(item_id=item, score=score, justification=f"[heuristic] {reason}")

    def validate(answer: NliJudgments) -> tuple[NliJudgments, list[str]]:
        repairs: list[str] = []

        def usable(item: str, judgment: NliJudgment) -> NliJudgment | None:
            if (score := _checked_score(judgment.score, repairs)) is None:
                repairs.append(INVALID_SCORE)
                return None
            return NliJudgment(item_id=item, score=score, justification=judgment.justification)

        found, dropped = keep_known_unique(
            answer.judgments, heuristic, key=lambda j: j.item_id.strip(), keep=usable
        )
        repairs += dropped
        if not found:
            raise InvalidAnswer(
                "no judgment names a candidate with a usable score; use the ids in square brackets",
                kind=NO_VALID_IDS,
            )
        repairs += missing_ids(found, items)[1]
        return NliJudgments(judgments=[found.get(i) or judged(i) for i in items]), repairs

    schema = constrained_schema(
        NliJudgments,
        {
            "judgments": {"minItems": len(items), "maxItems": len(items)},
            **_judgment_constraints(items, "judgments[]."),
        },
    )
    messages = _nli_messages(env, ctx, history, items, batched=True)
    fallback = lambda: NliJudgments(judgments=[judged(i) for i in items])  # noqa: E731
    return AgentTask(
        agent="nli",
        role="rec",
        messages=messages,
        schema=NliJudgments,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    )


def nli_item_task(
    env: Environment, ctx: AragContext, history: Sequence[str], item: str
) -> AgentTask[NliJudgment]:
    """NLI agent, per item: one answer judges one item of the recall set."""
    score, reason = heuristic_nli(env, history, [item], ctx.arag_session_items)[item]
    heuristic = NliJudgment(item_id=item, score=score, justification=f"[heuristic] {reason}")

    def validate(answer: NliJudgment) -> tuple[NliJudgment, list[str]]:
        repairs = [] if answer.item_id.strip() == item else ["wrong_item_id"]
        checked = _checked_score(answer.score, repairs)
        if checked is None:
            raise InvalidAnswer("'score' must be a number from 0 to 10", kind=INVALID_SCORE)
        return NliJudgment(item_id=item, score=checked, justification=answer.justification), repairs

    messages = _nli_messages(env, ctx, history, [item], batched=False)
    return AgentTask(
        agent="nli",
        role="rec",
        messages=messages,
        schema=NliJudgment,
        validate=validate,
        fallback=lambda: heuristic,
        json_schema=constrained_schema(NliJudgment, _judgment_constraints([item])),
    )


def accepted_items(
    items: Sequence[str], scores: dict[str, float] | None, threshold: float
) -> dict[str, float]:
    """I⁺ with salience weights, most salient first: items with s_NLI ≥ θ weighted by s_NLI
    (every item with weight 1 when there are no NLI scores). Ties keep the recall order."""
    if scores is None:
        return dict.fromkeys(items, 1.0)
    kept = [i for i in items if scores.get(i, NEUTRAL_SCORE) >= threshold]
    kept.sort(key=lambda i: -scores.get(i, NEUTRAL_SCORE))
    return {i: scores.get(i, NEUTRAL_SCORE) for i in kept}


def context_summary_task(
    env: Environment,
    ctx: AragContext,
    items: Sequence[str],
    user_summary: str,
    nli: tuple[dict[str, float], dict[str, str]] | None,
) -> tuple[AgentTask[ContextSummary], dict[str, float]]:
    """CSA: summarise the accepted items (S_user as prior, NLI scores as weights); also I⁺."""
    scores, reasons = nli if nli is not None else (None, {})
    weights = accepted_items(items, scores, ctx.arag_nli_threshold)
    if scores is None:
        selection = "all recalled items, unweighted: no NLI judgments"
        lines = [item_text(env, i, ctx) for i in weights]
    else:
        selection = f"items with support ≥ {ctx.arag_nli_threshold:g}"
        lines = []
        for i, w in weights.items():
            head = f"{item_line(env.dataset, i)} | support {w:.1f}: {quote(reasons.get(i, ''))}"
            lines.append(item_text(env, i, ctx, head))
    messages = prompts.CONTEXT_SUMMARY.format_messages(
        user_summary=quote(user_summary),
        selection=selection[0].upper() + selection[1:],
        scale="0–10",
        accepted="\n".join(lines) or "(none)",
    )
    extractive = extractive_context_summary(env.dataset, weights, len(items), user_summary, selection)

    def validate(answer: ContextSummary) -> tuple[ContextSummary, list[str]]:
        if not answer.summary.strip():
            raise InvalidAnswer("'summary' is empty", kind=EMPTY_ANSWER)
        return ContextSummary(summary=answer.summary.strip()), []

    schema = constrained_schema(ContextSummary, {"summary": {"maxLength": 700}})
    task = AgentTask(
        agent="context_summary",
        role="rec",
        messages=messages,
        schema=ContextSummary,
        validate=validate,
        fallback=lambda: ContextSummary(summary=extractive),
        json_schema=schema,
    )
    return task, weights
