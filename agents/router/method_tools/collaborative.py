"""CollaborativeSignal (a router method tool): the classic collaborative scores of the candidates.

It reads the user's visible history through `get_user` (up to `HISTORY_LIMIT` most recent items,
what the scenario allows) and scores every candidate with the project's classic baselines
(agents/baselines/classic.py): item-kNN, the summed training co-occurrence cosine to the history
(`itemknn_neighbors` neighbours per item), and BPR's factors (trained once per dataset and cached),
both unless `router_collaborative` names fewer. Each scorer's scores are rank-normalised over the
candidates (percentile ranks, ties shared) and averaged; that is each candidate's score in [0, 1].
BPR is in by default because it carries what co-occurrence misses: on ml-100k's training tasks,
MemoryNeighbourhood fused with item-kNN alone reaches 0.786 AvgHR@{1,3,5}, with both 0.809.
It reports how many candidates item-kNN links to the history at all (`linked_candidates`), which
the router's rule planner reads.
Without visible history the scorers fall back to training popularity, as the baselines do, at a low
confidence. No model is asked (`needed=False`): the scores are the answer.
"""

from __future__ import annotations

import numpy as np

from agents.baselines.classic import TIE_BREAK, score_bpr, score_itemknn
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.evidence import percentile_ranks, title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.chainrec.online.user_tools import fetch_history
from agents.router.method_tools.support import ranked_evidence
from state.baselines.context import BaselinesContext
from state.chainrec.schemas import ToolOutput
from state.context import context_as
from state.router.context import DEFAULT_SCORERS
from world.environment import Environment
from world.errors import RecgraphError

HISTORY_LIMIT = 500
"""Most recent visible interactions the scores are computed from (`get_user`'s largest page)."""
SCORERS = {"itemknn": score_itemknn, "bpr": score_bpr}
"""`router_collaborative` names -> the classic baseline scorer."""
CONFIDENCE = {True: 0.8, False: 0.2}
"""Confidence with and without visible history (without: popularity only)."""

NAME = "CollaborativeSignal"
SPEC = ToolSpec(
    NAME,
    "collaborative_signal",
    "item",
    "Classic collaborative filtering over every candidate: how strongly other users' training "
    "interactions link it to the user's visible history (item-kNN co-occurrence and BPR factors).",
    "get_user for the visible history, get_item for every candidate; the training interactions",
    "one entry per candidate (collaborative score 0-1, rank-normalised); no LLM call",
    weight_field="chainrec_weight_collaborative",
)
"""What the planner sees of CollaborativeSignal."""
PREREQUISITE: str | None = None
"""Nothing to build first (item-kNN's similarity is computed on first use, BPR trains on first use)."""
BLOCKING = True
"""The first fetch computes item-kNN's similarity matrix (and BPR trains or loads from disk): always
off the event loop."""


def scorer_names(ctx: object) -> list[str]:
    """The scorers `router_collaborative` names (comma-separated), refusing an unknown one."""
    text = str(getattr(ctx, "router_collaborative", DEFAULT_SCORERS))
    names = [part.strip() for part in text.split(",") if part.strip()] or [DEFAULT_SCORERS]
    unknown = [name for name in names if name not in SCORERS]
    if unknown:
        raise RecgraphError(f"unknown router_collaborative scorer {unknown[0]!r}; use {', '.join(SCORERS)}")
    return list(dict.fromkeys(names))


def unavailable(env: Environment, ctx: object) -> str | None:
    """None: the training interactions are all CollaborativeSignal needs (every dataset has them)."""
    return None


def cost(ctx: object) -> ToolCost:
    """No LLM call: the scores are the answer."""
    return ToolCost(0, 0)


def collaborative_scores(episode: Episode, history: list[str]) -> dict[str, np.ndarray]:
    """Each scorer `router_collaborative` names -> its raw scores of the candidates."""
    knobs = context_as(BaselinesContext, episode.ctx, {})
    scope = episode.scope
    candidates = list(episode.candidates)
    return {
        name: SCORERS[name](episode.env, knobs, scope.user_id, history, candidates, scope.scenario)
        for name in scorer_names(episode.ctx)
    }


def linked_count(raw: dict[str, np.ndarray], history: list[str]) -> int:
    """Candidates item-kNN links to the history (co-occurrence above its popularity tie-break; all of
    them when only BPR scores, none without history)."""
    if not history:
        return 0
    if "itemknn" not in raw:
        return len(next(iter(raw.values())))
    return int((raw["itemknn"] > TIE_BREAK).sum())


def collaborative_signal(episode: Episode) -> Fetched:
    """CollaborativeSignal: classic collaborative scores of the candidates, no model asked."""
    user = fetch_history(episode, HISTORY_LIMIT)
    history = [row["item_id"] for row in reversed(user["interactions"])]  # oldest first, as baselines read
    records = fetch_items(episode, list(episode.candidates))
    raw = collaborative_scores(episode, history)
    scores = np.mean([percentile_ranks(values) for values in raw.values()], axis=0)
    linked = linked_count(raw, history)
    basis = "+".join(raw) if history else "popularity (no visible history)"
    items, best, text = ranked_evidence(records, scores, basis, "collaborative")
    facets = [
        facet("collaborative_basis", f"{basis} over {len(history)} visible interactions"),
        facet("strongest_links", title_list(best, 3)),
        facet("linked_candidates", f"{linked} of {len(records)} co-occur with the history"),
    ]
    summary = f"Most linked to the history by other users' interactions: {title_list(best, 3)}."
    output = ToolOutput(facets=facets, confidence=CONFIDENCE[bool(history)], summary=summary, items=items)
    stats = {
        "history_items": float(user["total"]),
        "collaborative_items": float(len(history)),
        "linked_candidates": float(linked),
    }
    notes = () if history else ("no visible history: popularity only",)
    return Fetched(text, output, stats, tuple(episode.candidates), needed=False, notes=notes)
