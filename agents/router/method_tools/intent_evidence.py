"""IntentEvidence: ARAG's user understanding, NLI judgments and context summary over the candidates
(a method tool of the router's library).

Fetch (no LLM): ARAG's agents run as their own fallbacks, built by ARAG's task functions with the
run's ARAG knobs (`arag_session_items`, `history_items`, `arag_nli_threshold`,
`arag_use_nli`, `arag_use_csa`), the candidates standing for ARAG's recall set I⁰:
- user understanding: the extractive S_user (long-term top categories and latest titles; the current
  session C_st as the intent, split as ARAG splits it: `agents.arag.signals.session_context`, by time
  where the dataset has timestamps, at most `arag_session_items` items);
- NLI: each candidate's support for the intent on 0–10, `10 · clip(½ cos(item, intent) + ½ era
  fit)` (`agents.arag.signals.heuristic_nli`); the candidate's score is s_NLI / 10;
- context summary: the extractive S_ctx over the accepted candidates (s_NLI ≥ θ), salience-weighted.
With `arag_use_nli` off a candidate's score is ARAG's ranker fusion without NLI (cosine to the
session, training popularity without history) and the summary covers every candidate, unweighted;
with `arag_use_csa` off there is no summary. ARAG's four LLM agents are not asked inside the tool:
its one call reads the same history, S_user, judgments and summary and answers all at once (the
item ranker's ordering is CandidateRank's job). Confidence = 0.3 + 0.3 × min(1, history / (4 ×
session)), 0.1 without visible history (then no model is asked).

Visibility: everything is computed from the scenario's visible history and the catalog's item texts.
"""

from __future__ import annotations

import numpy as np

from agents.arag.agents import context_summary_task, nli_task, user_understanding_task
from agents.arag.signals import NEUTRAL_SCORE, fused_scores, session_context, split_context
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.router.method_tools.support import (
    item_evidence,
    knobs,
    planned_cost,
    top_titles,
    visible_items,
)
from agents.validation import cut_text
from prompts.common import CANDIDATES_HEADER, item_block, item_line, quote
from state.arag.context import AragContext
from state.arag.schemas import NLI_MAX
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import ToolOutput
from world.environment import Environment

NAME = "IntentEvidence"
SPEC = ToolSpec(
    NAME,
    "intent_evidence",
    "item",
    "ARAG's reading of the user: lasting preferences and the current session's intent, how strongly "
    "each candidate's text supports that intent (NLI), and a summary of the supporting candidates.",
    "get_user for the visible history (long-term part and recent session), get_item for every candidate",
    "facets on tastes and intent; one entry per candidate (intent support 0-1, NLI score / 10)",
    weight_field="chainrec_weight_intent_evidence",
)
"""What the planner sees of the tool."""
PREREQUISITE: str | None = None
"""Nothing to build first: ARAG reads the catalog's MiniLM vectors, embedded on demand."""
BLOCKING = False
"""Pure computation over item vectors (the node moves it off the loop while vectors are pending)."""
JUSTIFICATION_CHARS = 90
"""A candidate line's NLI justification is cut to this many characters."""
SESSION_LINE_CHARS = 85
"""Planned cost: characters of one session line."""
SUMMARY_CHARS = 700
"""Planned cost: characters of S_user and S_ctx together."""
CANDIDATE_LINE_CHARS = 190
"""Planned cost: characters of one candidate line (item line, NLI score and justification)."""
HEADER_CHARS = 250
"""Planned cost: characters of the headings."""


def unavailable(env: Environment, ctx: ChainRecContext) -> str | None:
    """Always None: ARAG needs no trained store, only the catalog's item texts (no context field read)."""
    return None


def cost(ctx: ChainRecContext) -> ToolCost:
    """Planned cost of one call: the session lines, S_user and S_ctx, one line per candidate.
    Character sizes are typical ml-100k lines (20 users: median prompt within 10% of it)."""
    arag = knobs(ctx, AragContext)
    data = arag.arag_session_items * SESSION_LINE_CHARS + SUMMARY_CHARS + HEADER_CHARS
    return planned_cost(SPEC, data, CANDIDATE_LINE_CHARS)


def intent_evidence(episode: Episode) -> Fetched:
    """IntentEvidence: ARAG's S_user, NLI judgments and S_ctx for the candidates (see the module
    docstring)."""
    env, configured = episode.env, knobs(episode.ctx, AragContext)
    candidates, history = list(episode.candidates), visible_items(episode)
    # ARAG's own u = (C_lt, C_st): the session split by time where the dataset has timestamps.
    arag = session_context(configured, env, episode.scope.user_id, history)
    long_term, session = split_context(history, arag.arag_session_items)
    user = user_understanding_task(env, arag, history).fallback()
    nli = None
    if arag.arag_use_nli:
        judgments = nli_task(env, arag, history, candidates).fallback().judgments
        nli = ({j.item_id: j.score for j in judgments}, {j.item_id: j.justification for j in judgments})
    summary_task, accepted = context_summary_task(env, arag, candidates, user.text(), nli)
    context = summary_task.fallback().summary if arag.arag_use_csa else ""
    if nli is not None:
        scores = np.array([nli[0].get(c, NEUTRAL_SCORE) / NLI_MAX for c in candidates])
    else:
        scores = fused_scores(env, history, candidates, arag.arag_session_items, None)[0]
    lines = [CANDIDATES_HEADER]
    items = []
    for i, item in enumerate(candidates):
        mark = " (accepted)" if item in accepted and nli is not None else ""
        if nli is not None:
            judged = f"NLI {nli[0][item]:.1f}/10{mark}: {quote(nli[1][item], JUSTIFICATION_CHARS)}"
            note = f"NLI {nli[0][item]:.1f}/10{mark}"
        else:
            judged = note = f"session fit {scores[i]:.2f}"
        lines.append(f"{item_line(env.dataset, item)} | {judged}")
        items.append(item_evidence(item, float(scores[i]), note))
    threshold = f"NLI ≥ {arag.arag_nli_threshold:g}" if nli is not None else "no NLI: every candidate"
    best = top_titles(env, candidates, scores)
    facets = [
        facet("long_term", user.long_term),
        facet("session_intent", user.session_intent),
        facet("supporting_candidates", f"{len(accepted)} of {len(candidates)} ({threshold})"),
        facet("best_supported", best),
    ]
    if context:
        facets.append(facet("context_summary", context))
    gist = user.session_intent.split(" — ", 1)[-1]  # the extractive intent: "recently <titles> — <gist>"
    summary = f"Current intent: {cut_text(gist, 140, collapse=True)}. Best supported: {best}."
    reach = min(1.0, len(history) / (4 * max(configured.arag_session_items, 1)))
    confidence = round(0.3 + 0.3 * reach, 4) if history else 0.1
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    text = "\n".join(
        [
            f"ARAG's user understanding ({len(long_term)} earlier items, a session of {len(session)}):",
            f"Long-term preferences: {quote(user.long_term)}",
            f"Current intent: {quote(user.session_intent)}",
            "The session, oldest first:",
            item_block(env.dataset, session),
            f"Summary of the candidates that support the intent ({threshold}): "
            + (quote(context, 700) if context else "(none: the context summary is off)"),
            "",
            "\n".join(lines),
        ]
    )
    stats = {
        "history_items": float(len(history)),
        "session_items": float(len(session)),
        "accepted_candidates": float(len(accepted)),
    }
    notes = () if episode.domain["categories"] else ("no categories: S_user lists titles only",)
    return Fetched(text, output, stats, tuple(candidates), needed=bool(history), notes=notes)
