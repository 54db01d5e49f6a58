"""What ChainRec switches off on a dataset that lacks a field (a pure function of the domain flags).

Two kinds: tools the feasibility mask never allows (they need ratings, authors or locations the
dataset does not have), and parts of the tools that run anyway but read a missing field — category
distributions (LongTermPreference's profile, ShortTermPreference's recent and emerging categories,
ItemSemantic's tags, CandidateRank's category match: titles and MiniLM similarity stand in) and the
dated recency window (ShortTermPreference counts items instead of days).
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.chainrec.online.catalog import CANDIDATE_RANK, TOOLS

FEATURE_NEEDS = {"category_distributions": "categories", "dated_recency_window": "timestamps"}
"""Tool features that run on any dataset but read an optional field, and that field's domain flag."""
WORDING = {
    "categories": "no item categories",
    "timestamps": "no timestamps (interaction order only)",
    "ratings": "no ratings",
    "reviews": "no reviews",
    "authors": "no item authors",
    "locations": "no item locations",
}
"""How a missing domain flag is worded (world.shape's words, plus locations)."""


def switched_off(domain: Mapping[str, bool]) -> list[str]:
    """`feature: reason` for every tool masked by the domain and every tool feature it lacks a
    field for, in catalog order then `FEATURE_NEEDS` order."""
    off = []
    for spec in TOOLS:
        missing = [flag for flag in spec.requires if not domain.get(flag, False)]
        if spec.name != CANDIDATE_RANK and missing:
            off.append(f"{spec.name}: {' and '.join(WORDING.get(m, f'no {m}') for m in missing)}")
    off += [f"{feature}: {WORDING[flag]}" for feature, flag in FEATURE_NEEDS.items() if not domain.get(flag)]
    return off
