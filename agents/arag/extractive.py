"""Extractive summaries: the user-understanding and context-summary agents' fallbacks.

Both are built from the catalog text and simple statistics only, so they are deterministic
and cheap, and they read like what the LLM agents would write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from agents.arag.signals import category_weights, format_weights, titled, year_span
from state.arag.schemas import UserSummary
from world.data import Dataset

LISTED_TITLES = 5
"""How many titles an extractive summary names."""


def extractive_user_summary(
    dataset: Dataset, long_term: Sequence[str], session: Sequence[str]
) -> UserSummary:
    """S_user: long-term top categories with their weights and latest titles; the session's titles,
    categories and years."""
    if not long_term and not session:
        return UserSummary(
            long_term="no interaction history, so no known tastes",
            session_intent="unknown; widely liked items are the safest guess",
        )
    if long_term:
        recent = "; ".join(titled(dataset, i) for i in long_term[-3:])
        lasting = (
            f"over {len(long_term)} earlier items the top categories are "
            f"{format_weights(category_weights(dataset, long_term))}; latest of them: {recent}"
        )
    else:
        lasting = "no history before the current session"
    span = year_span(dataset, session)
    intent = (
        f"recently {'; '.join(titled(dataset, i) for i in session[-LISTED_TITLES:])} — mostly "
        + ", ".join(c for c, _ in category_weights(dataset, session, top=3))
        + (f", released {span}" if span else "")
    )
    return UserSummary(long_term=lasting, session_intent=intent)


def weighted_themes(dataset: Dataset, weights: dict[str, float], top: int = 5) -> list[tuple[str, float]]:
    """Categories of the weighted items, each with its share of the total weight."""
    mass: Counter[str] = Counter()
    for item, weight in weights.items():
        for category in dataset.items[item].categories:
            mass[category] += weight
    total = sum(weights.values()) or 1.0
    return [(c, w / total) for c, w in mass.most_common(top)]


def extractive_context_summary(
    dataset: Dataset,
    weights: dict[str, float],
    recalled: int,
    user_summary: str,
    selection: str,
) -> str:
    """S_ctx: the accepted items' salience-weighted themes (those the user summary mentions first),
    their years, and the most salient titles.

    `weights` maps each accepted item to its salience (its NLI score, or 1 without NLI), most
    salient first; `selection` says how the items were chosen.
    """
    if not weights:
        return f"None of the {recalled} recalled items passed the check ({selection}); no context."
    themes = weighted_themes(dataset, weights)
    mentioned = user_summary.lower()
    shared = [(c, w) for c, w in themes if c.lower() in mentioned]
    other = [(c, w) for c, w in themes if c.lower() not in mentioned]
    parts = [f"{len(weights)} of {recalled} recalled items kept ({selection})."]
    if shared:
        parts.append(f"Themes the user profile also names: {format_weights(shared)}.")
    if other:
        parts.append(f"Other themes: {format_weights(other)}.")
    if span := year_span(dataset, list(weights)):
        parts.append(f"Released {span}.")
    named = list(weights)[:LISTED_TITLES]
    parts.append("Most salient: " + "; ".join(titled(dataset, i) for i in named) + ".")
    return " ".join(parts)
