"""PositivePreference and NegativePreference: what the user's ratings and reviews say to favour and to
avoid.

Fallbacks (rating-based): a like is a rating of at least 80% of the dataset's top rating (4 of 5),
a dislike at most 40% (2 of 5). PositivePreference reports the liked items' category distribution,
the most recent liked titles and, when the dataset has review text, the most informative favourable
review (quoted); NegativePreference the categories over-represented among dislikes (their share
there minus their share overall), the disliked titles and a critical review. Confidence =
min(1, likes / 10) and min(1, dislikes / 5). With nothing liked (disliked) no model is asked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agents.chainrec.online.evidence import category_shares, format_shares, rating_thresholds, title_list
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.chainrec.online.user_tools import fetch_history
from prompts.chainrec import history_block, quote, review_block
from state.chainrec.schemas import ToolOutput
from tools.chainrec.episode_tools import call, get_reviews

REVIEW_POOL = 20
"""Reviews by the user fetched (most helpful first) before keeping those of the right polarity."""
FULL_LIKES = 10
FULL_DISLIKES = 5


@dataclass
class Polar:
    """The user's rated history split by one polarity."""

    rows: list[dict[str, Any]]
    """Every fetched interaction."""
    chosen: list[dict[str, Any]]
    """Interactions whose rating has the polarity."""
    reviews: list[dict[str, Any]]
    """The user's reviews of the polarity, most informative first."""
    stats: dict[str, float]
    """rated_items and <name>_items."""


def _polar(episode: Episode, keep: Callable[[float], bool], name: str) -> Polar:
    scope, ctx = episode.scope, episode.ctx
    rows = fetch_history(episode, ctx.chainrec_long_items)["interactions"]
    reviews: list[dict[str, Any]] = []
    if episode.domain["reviews"]:
        found = call(
            get_reviews,
            scope,
            user_id=scope.user_id,
            order="helpful",
            limit=REVIEW_POOL,
            max_chars=ctx.chainrec_review_chars,
        )
        reviews = [r for r in found["reviews"] if r.get("rating") is not None and keep(r["rating"])]
    rated = [row for row in rows if row.get("rating") is not None]
    chosen = [row for row in rated if keep(row["rating"])]
    stats = {"rated_items": float(len(rated)), f"{name}_items": float(len(chosen))}
    return Polar(rows, chosen, reviews[: ctx.chainrec_review_count], stats)


def _data(title: str, polar: Polar) -> str:
    text = f"{title} (newest first):\n{history_block(polar.chosen)}"
    if polar.reviews:
        titles = {row["item_id"]: row["title"] for row in polar.rows}
        text += f"\n\nTheir most informative reviews of such items:\n{review_block(polar.reviews, titles)}"
    return text


def _nothing(key: str, value: str, summary: str, polar: Polar) -> Fetched:
    output = ToolOutput(facets=[facet(key, value)], confidence=0.0, summary=summary)
    return Fetched(f"({summary})", output, polar.stats, needed=False)


def positive(episode: Episode) -> Fetched:
    """PositivePreference: liked items and favourable reviews."""
    _, high = rating_thresholds(episode.scope.corpus.rating_max)
    polar = _polar(episode, lambda r: r >= high, "liked")
    rated = polar.stats["rated_items"]
    if not polar.chosen:
        value = f"no rating of {high:g} or more among {rated:.0f} rated items"
        return _nothing("liked", value, "No highly rated items in the visible history.", polar)
    shares = category_shares(polar.chosen)
    facets = [facet("liked_categories", format_shares(shares))] if shares else []
    facets.append(facet("liked_items", title_list(polar.chosen)))
    if polar.reviews:
        facets.append(facet("praise", quote(polar.reviews[0]["text"], 140)))
    mostly = ", ".join(name for name, _ in shares[:3]) or title_list(polar.chosen, 3)
    output = ToolOutput(
        facets=facets,
        confidence=round(min(1.0, len(polar.chosen) / FULL_LIKES), 2),
        summary=f"Rated {len(polar.chosen)} of {rated:.0f} items highly, mostly {mostly}.",
    )
    evidence = tuple(row["item_id"] for row in polar.chosen)
    return Fetched(_data("Items the user rated highly", polar), output, polar.stats, evidence=evidence)


def negative(episode: Episode) -> Fetched:
    """NegativePreference: disliked items, over-represented categories and critical reviews."""
    low, _ = rating_thresholds(episode.scope.corpus.rating_max)
    polar = _polar(episode, lambda r: r <= low, "disliked")
    rated = polar.stats["rated_items"]
    if not polar.chosen:
        value = f"no rating of {low:g} or less among {rated:.0f} rated items"
        return _nothing("disliked", value, "No poorly rated items in the visible history.", polar)
    overall = dict(category_shares(polar.rows))
    excess = [(c, s - overall.get(c, 0.0)) for c, s in category_shares(polar.chosen)]
    avoid = [c for c, d in sorted(excess, key=lambda p: (-p[1], p[0])) if d > 0]
    facets = [facet("disliked_categories", ", ".join(avoid[:4]))] if avoid else []
    facets.append(facet("disliked_items", title_list(polar.chosen)))
    if polar.reviews:
        facets.append(facet("complaint", quote(polar.reviews[0]["text"], 140)))
    what = ", ".join(avoid[:3]) or title_list(polar.chosen, 3)
    output = ToolOutput(
        facets=facets,
        confidence=round(min(1.0, len(polar.chosen) / FULL_DISLIKES), 2),
        summary=f"Rated {len(polar.chosen)} of {rated:.0f} items poorly; avoid {what}.",
    )
    evidence = tuple(row["item_id"] for row in polar.chosen)
    return Fetched(_data("Items the user rated poorly", polar), output, polar.stats, evidence=evidence)
