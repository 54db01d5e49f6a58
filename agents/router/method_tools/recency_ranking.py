"""RecencyRanking (a router method tool): LLMRank's recency-focused prompt (Hou et al., ECIR 2024) as
evidence: the user's visible history numbered in order, its latest interaction named again, and
the candidates, for the model to judge from its own knowledge of the items what comes next.

What it adds: the other tools score candidates from training statistics, memories or the
user's stated preferences; this one asks the model directly, with the order made explicit, which
is what LLMRank found lets a zero-shot ranker use the sequence. Of LLMRank's three prompts the
recency-focused one is the tool: the paper shows its reminder is what makes the order count, and
on ml-100k (heuristic fallbacks, 200 users) it led the three (ndcg@5 0.464 against 0.425).

Fetch (no LLM): the last `llmrank_history_items` visible interactions (the baseline's knob), and each
candidate's score from LLMRank's own fallback: MiniLM cosine to the shown history with the latest
item weighing as much as the others together (agents/baselines/llmrank.py `recency_profile`),
rank-normalised over the candidates; popularity without visible history, at a low confidence and
without asking a model. The one LLM call reads the numbered history and the candidates.
"""

from __future__ import annotations

from agents.baselines.llmrank import numbered_history, recency_profile, shown_history
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.evidence import percentile_ranks, title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.router.method_tools.support import knobs, planned_cost, ranked_evidence, visible_items
from prompts.common import item_line
from state.baselines.context import BaselinesContext
from state.chainrec.schemas import ToolOutput
from tools.similarity import similarity_scores
from world.environment import Environment

NAME = "RecencyRanking"
SPEC = ToolSpec(
    NAME,
    "recency_ranking",
    "item",
    "LLMRank's recency-focused ranking: the user's history in order with the latest interaction "
    "named again, and which candidates the model expects next from what it knows of the items.",
    "get_user for the visible history in order (the last llmrank_history_items), get_item for every "
    "candidate",
    "one entry per candidate (how likely next 0-1); the numbered history and the latest item",
    weight_field="chainrec_weight_recency_ranking",
)
"""What the planner sees of RecencyRanking."""
PREREQUISITE: str | None = None
"""Nothing to build first (MiniLM vectors are the dataset's own)."""
BLOCKING = False
"""The fetch reads the in-memory item vectors only."""
CONFIDENCE = {True: 0.5, False: 0.1}
"""Confidence with and without visible history (without: popularity only)."""
HISTORY_LINE_CHARS = 60
"""Planned cost: characters of one numbered history line (a typical ml-100k item line)."""
CANDIDATE_LINE_CHARS = 80
"""Planned cost: characters of one candidate line and its score."""
HEADER_CHARS = 200
"""Planned cost: characters of the headings and the latest-item reminder."""


def unavailable(env: Environment, ctx: object) -> str | None:
    """None: the visible history and the item text are all it needs (every dataset has them)."""
    return None


def cost(ctx: object) -> ToolCost:
    """Planned cost of one call: `llmrank_history_items` numbered lines (the paper's 50 by default;
    a user with fewer shows fewer, so this is an upper plan), the headings, one line per candidate."""
    shown = knobs(ctx, BaselinesContext).llmrank_history_items  # type: ignore[arg-type]
    return planned_cost(SPEC, shown * HISTORY_LINE_CHARS + HEADER_CHARS, CANDIDATE_LINE_CHARS)


def recency_ranking(episode: Episode) -> Fetched:
    """RecencyRanking: LLMRank's recency-focused evidence over the candidates (module docstring)."""
    env = episode.env
    settings = knobs(episode.ctx, BaselinesContext)  # type: ignore[arg-type]
    candidates = list(episode.candidates)
    records = fetch_items(episode, candidates)
    shown = shown_history(env, settings, visible_items(episode), candidates)
    scores = percentile_ranks(similarity_scores(env, recency_profile(shown), candidates))
    basis = f"MiniLM similarity to {len(shown)} recent items, latest weighted" if shown else "popularity"
    items, best, block = ranked_evidence(records, scores, basis, "next-item")
    latest = item_line(env.dataset, shown[-1]) if shown else "(none)"
    text = "\n".join(
        [
            "The user's visible history, in the order it happened:",
            numbered_history(env, shown),
            f"The most recent interaction, which says the most about what comes next: {latest}",
            "",
            block,
        ]
    )
    facets = [
        facet("shown_history", f"{len(shown)} most recent visible interactions, in order"),
        facet("latest_interaction", latest),
        facet("likely_next", title_list(best, 3)),
    ]
    summary = f"Following the latest interactions, most likely next: {title_list(best, 3)}."
    output = ToolOutput(facets=facets, confidence=CONFIDENCE[bool(shown)], summary=summary, items=items)
    stats = {"history_items": float(len(shown))}
    notes = () if shown else ("no visible history: popularity only",)
    return Fetched(text, output, stats, tuple(candidates), needed=bool(shown), notes=notes)
