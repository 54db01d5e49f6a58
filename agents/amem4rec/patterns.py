"""The extractor's deterministic fallback: a title-free pattern from a window's statistics.

With categories: the dominant category (how many of the w items carry it, and what comes with it),
the order of categories with its transitions (stays within / moves from A to B), and repeats.
Titles-only catalogs (no item in the window has a category): the same structure over what needs
no category — training-popularity bands (widely popular: top 20% of items, niche: bottom half),
release decade when items carry a year, and how related consecutive items' texts are (MiniLM
cosine) — and a note saying categories were missing. Never a title, brand or name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import pairwise

import numpy as np

from agents.validation import cut_text
from world.environment import Environment

RELATED, UNRELATED = 0.5, 0.3
"""MiniLM cosine above which consecutive items count as closely related / below which as unrelated."""
PATTERN_NEEDS = {"category_patterns": "categories", "release_era": "years"}
"""Parts of the fallback pattern and the dataset field each needs (the pool's memories, and so the
ranking that retrieves them, go without them when the dataset lacks the field)."""
NO_CATEGORIES_NOTE = (
    "no categories in this window: pattern from popularity, era and text-similarity statistics"
)


def _ordered_counts(labels: Sequence[Sequence[str]]) -> list[tuple[str, int]]:
    """Label counts over items (one count per item), most frequent first, ties by first appearance."""
    first: dict[str, int] = {}
    counts: Counter[str] = Counter()
    for position, item_labels in enumerate(labels):
        for label in dict.fromkeys(item_labels):
            counts[label] += 1
            first.setdefault(label, position)
    return sorted(counts.items(), key=lambda pair: (-pair[1], first[pair[0]]))


def _transitions(labels: Sequence[Sequence[str]]) -> list[str]:
    steps = []
    for before, after in pairwise(labels):
        shared = [c for c in after if c in before]
        if shared:
            steps.append(f"stays with {shared[0]}")
        elif before and after:
            steps.append(f"moves from {before[0]} to {after[0]}")
        else:
            steps.append("moves to a different kind of item")
    return steps


def _repeats(items: Sequence[str]) -> str:
    again = len(items) - len(set(items))
    return f" It returns to an item already chosen ({again} repeat{'s' * (again > 1)})." if again else ""


def describe_labels(
    items: Sequence[str], labels: Sequence[Sequence[str]], kinds: str, noun: str = ""
) -> tuple[str, str]:
    """(behaviour, pattern) sentences over per-item labels (categories or statistics bands); `kinds`
    names the labels in plural ("categories"), `noun` follows a label ("items" after "niche")."""
    counts = _ordered_counts(labels)
    w = len(items)
    top, n = counts[0]
    others = [label for label, _ in counts[1:3]]
    if n > 1:
        behavior = f"Keeps returning to {top}{' ' + noun if noun else ''} ({n} of {w} items)"
        behavior += f", with {' and '.join(others)} alongside." if others else "."
    else:
        shown = ", ".join(label for label, _ in counts[:3])
        behavior = f"Samples varied {kinds} without a dominant one ({shown})."
    sequence = " → ".join("/".join(item_labels[:2]) or "unlabelled" for item_labels in labels)
    steps = _transitions(labels)
    pattern = f"Order: {sequence}; " + ", then ".join(steps) + "." + _repeats(items)
    return behavior, pattern


def popularity_band(env: Environment, item_id: str) -> str:
    """widely popular (top 20% of training popularity), niche (bottom half) or mid-popularity."""

    def cuts() -> tuple[float, float]:
        counts = np.array(sorted(env.popularity.get(i, 0) for i in env.item_ids), dtype=np.float64)
        return float(np.quantile(counts, 0.5)), float(np.quantile(counts, 0.8))

    low, high = env.resource("amem4rec_popularity_cuts", cuts)
    count = env.popularity.get(item_id, 0)
    return "widely popular" if count > high else "niche" if count <= low else "mid-popularity"


def statistics_labels(env: Environment, items: Sequence[str]) -> tuple[list[list[str]], str]:
    """Per-item title-free labels (popularity band, decade) and a sentence on content relatedness."""
    labels = []
    for item_id in items:
        year = env.dataset.items[item_id].attributes.get("year", "")
        decade = [f"{year[:3]}0s"] if len(year) == 4 and year.isdigit() else []
        labels.append([popularity_band(env, item_id), *decade])
    vectors = env.item_vectors()[[env.item_index[i] for i in items]]
    similarity = [float(a @ b) for a, b in pairwise(vectors)]
    mean = sum(similarity) / len(similarity) if similarity else 1.0
    kind = "closely related" if mean >= RELATED else "unrelated" if mean < UNRELATED else "loosely related"
    return labels, f" Consecutive choices are {kind} in content."


def fallback_pattern(env: Environment, items: Sequence[str], chars: int) -> tuple[str, str, str]:
    """(behavior_explanation, pattern_description, note) of a window, without any item name."""
    categories = [list(env.dataset.items[i].categories) for i in items]
    if any(categories):
        behavior, pattern = describe_labels(items, categories, "categories")
        note = "from the window's categories"
    else:
        labels, related = statistics_labels(env, items)
        behavior, pattern = describe_labels(items, labels, "kinds of item", "items")
        pattern += related
        note = NO_CATEGORIES_NOTE
    return cut_text(behavior, chars, collapse=True), cut_text(pattern, chars, collapse=True), note
