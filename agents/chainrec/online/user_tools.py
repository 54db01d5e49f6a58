"""LongTermPreference and ShortTermPreference: the user's lasting tastes and recent intent.

Fallbacks: LongTermPreference = the category distribution of the visible history (up to
`chainrec_long_items` most recent items), its most central items (MiniLM), era and mean rating;
confidence = min(1, items / 20). ShortTermPreference = the category distribution of the last
`chainrec_short_items` items (a recency window counted in items, so order-only data works), the
categories whose share there beats their long-run share by 15 points or more, and the window's span
in days when there are timestamps; confidence = how full the window is.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from agents.chainrec.online.evidence import (
    category_shares,
    central_rows,
    era,
    format_shares,
    rating_thresholds,
    title_list,
)
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from prompts.chainrec import history_block
from state.chainrec.schemas import ToolOutput
from tools.chainrec.episode_tools import call, get_user

FULL_CONFIDENCE_ITEMS = 20
"""LongTermPreference is fully confident from this many visible interactions."""
EMERGING_MARGIN = 0.15
"""ShortTermPreference: a category is emerging when its recent share beats its long-run share by this."""


def fetch_history(episode: Episode, limit: int) -> dict[str, Any]:
    """`get_user` for the episode's user: their visible interactions, most recent first."""
    return call(get_user, episode.scope, user_id=episode.scope.user_id, limit=limit)


def empty_history(summary: str) -> Fetched:
    """A user tool's answer when there is no visible history (no model is asked)."""
    output = ToolOutput(facets=[facet("history", "no visible interactions")], confidence=0.0, summary=summary)
    return Fetched("(no visible interactions)", output, {"history_items": 0.0}, needed=False)


def rating_stats(episode: Episode, rows: list[dict[str, Any]]) -> dict[str, float]:
    """How many rows are rated, rated low (dislikes) and rated high (likes)."""
    rated = [row["rating"] for row in rows if row.get("rating") is not None]
    low, high = rating_thresholds(episode.scope.corpus.rating_max)
    return {
        "rated_items": float(len(rated)),
        "low_rated_items": float(sum(r <= low for r in rated)),
        "high_rated_items": float(sum(r >= high for r in rated)),
    }


def long_term(episode: Episode) -> Fetched:
    """LongTermPreference: fetch the long-horizon history and profile it."""
    user = fetch_history(episode, episode.ctx.chainrec_long_items)
    rows = user["interactions"]
    if not rows:
        return empty_history("No visible history: there is no long-term profile to draw.")
    shares = category_shares(rows)
    anchors = central_rows(episode.env, rows, 5)
    facets = [facet("favourite_categories", format_shares(shares))] if shares else []
    facets.append(facet("representative_items", title_list(anchors)))
    if period := era(rows):
        facets.append(facet("typical_era", period))
    rated = [row["rating"] for row in rows if row.get("rating") is not None]
    if rated:
        facets.append(facet("mean_rating", f"{sum(rated) / len(rated):.1f} over {len(rated)} rated items"))
    facets.append(facet("history_size", f"{user['total']} visible interactions ({len(rows)} read)"))
    mostly = ", ".join(name for name, _ in shares[:3]) or "no categories recorded"
    summary = f"{user['total']} visible interactions; mostly {mostly}; typical: {title_list(anchors, 3)}."
    confidence = round(min(1.0, len(rows) / FULL_CONFIDENCE_ITEMS), 2)
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary)
    stats = {"history_items": float(user["total"]), **rating_stats(episode, rows)}
    header = f"The user's {len(rows)} most recent of {user['total']} visible interactions (newest first):\n"
    notes = () if episode.domain["categories"] else ("no categories: profile from titles and embeddings",)
    evidence = tuple(row["item_id"] for row in rows)
    return Fetched(header + history_block(rows), output, stats, notes=notes, evidence=evidence)


def _span_days(rows: list[dict[str, Any]]) -> float | None:
    dates = [date.fromisoformat(row["date"]) for row in rows if row.get("date")]
    return float((max(dates) - min(dates)).days) if len(dates) >= 2 else None


def short_term(episode: Episode) -> Fetched:
    """ShortTermPreference: fetch the recent window and contrast it with the longer run."""
    window = episode.ctx.chainrec_short_items
    user = fetch_history(episode, max(window, episode.ctx.chainrec_long_items))
    rows = user["interactions"]
    if not rows:
        return empty_history("No visible history: there is no recent intent to read.")
    recent = rows[:window]
    recent_shares, overall = category_shares(recent), category_shares(rows)
    long_run = dict(overall)
    emerging = [c for c, share in recent_shares if share - long_run.get(c, 0.0) >= EMERGING_MARGIN]
    facets = [facet("recent_categories", format_shares(recent_shares, 4))] if recent_shares else []
    facets.append(facet("recent_items", title_list(recent)))
    if emerging:
        facets.append(facet("emerging_interests", ", ".join(emerging[:4])))
    stats = {"recent_items": float(len(recent)), "history_items": float(user["total"])}
    if (span := _span_days(recent)) is not None:
        facets.append(facet("window", f"last {len(recent)} interactions span {span:.0f} days"))
        stats["window_days"] = span
    focus = ", ".join(c for c, _ in recent_shares[:2]) or title_list(recent, 2)
    shift = f"; emerging: {', '.join(emerging[:3])}" if emerging else ""
    output = ToolOutput(
        facets=facets,
        confidence=round(min(1.0, len(recent) / window), 2),
        summary=f"Recently ({len(recent)} items) about {focus}{shift}.",
    )
    text = f"The user's {len(recent)} most recent interactions (newest first):\n{history_block(recent)}"
    if overall:
        text += f"\n\nFor contrast, their long-run categories: {format_shares(overall)}"
    notes = () if episode.domain["timestamps"] else ("no timestamps: the recency window counts items",)
    evidence = tuple(row["item_id"] for row in recent)
    return Fetched(text, output, stats, notes=notes, evidence=evidence)
