"""ItemSemantic and ItemProfile: per-candidate evidence (one entry per candidate).

Fallbacks: ItemSemantic scores a candidate by the MiniLM cosine between it and the user's recent
history (recency-weighted mean of the 20 most recent visible items, clipped to [0, 1]); tags are its
first categories (title words without categories); without history every score is 0.5 at confidence
0.1. ItemProfile scores popularity and quality among the candidates: 0.75 · log(1 + n) / log(1 + max n)
+ 0.25 · Bayesian mean rating / top rating (prior: the dataset mean, weight 5), where n counts the
visible interactions (others', before the user's target time); without ratings, popularity only.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.chainrec.online.evidence import clip01, recency_profile, title_list
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.chainrec.online.user_tools import fetch_history
from prompts.chainrec import candidate_block, history_block, quote
from state.chainrec.schemas import NOTE_CHARS, ItemEvidence, ToolOutput
from tools.chainrec.episode_tools import call, get_item, get_reviews

PROFILE_ITEMS = 20
"""ItemSemantic: recent history items the semantic profile is built from."""
PRIOR_WEIGHT = 5.0
"""ItemProfile: weight of the dataset's mean rating in a candidate's Bayesian mean."""
COLD_INTERACTIONS = 2
"""ItemProfile: a candidate with at most this many visible interactions is cold."""
REVIEW_SNIPPET = 160


def fetch_items(episode: Episode, item_ids: list[str]) -> list[dict[str, Any]]:
    """`get_item` records of `item_ids`, in that order."""
    return call(get_item, episode.scope, item_ids=item_ids)["items"] if item_ids else []


def _review_lines(episode: Episode, item_id: str) -> list[str]:
    """One informative review of a candidate (quoted), when the dataset has review text."""
    if not episode.domain["reviews"]:
        return []
    found = call(
        get_reviews, episode.scope, item_id=item_id, order="helpful", limit=1, max_chars=REVIEW_SNIPPET
    )
    return [quote(r["text"], REVIEW_SNIPPET) for r in found["reviews"] if r.get("text")]


def _tags(record: dict[str, Any]) -> str:
    if record["categories"]:
        return ", ".join(record["categories"][:3])
    return ", ".join([w for w in record["title"].split() if len(w) > 3][:3])


def _evidence(record: dict[str, Any], score: float, note: str) -> ItemEvidence:
    return ItemEvidence(item_id=record["item_id"], score=round(clip01(score), 4), note=note[:NOTE_CHARS])


def item_semantic(episode: Episode) -> Fetched:
    """ItemSemantic: candidates' themes and their semantic fit with the recent history."""
    env = episode.env
    records = fetch_items(episode, list(episode.candidates))
    rows = fetch_history(episode, PROFILE_ITEMS)["interactions"]
    profile = recency_profile(env, [row["item_id"] for row in rows])
    if profile is None:
        fits = np.full(len(records), 0.5)
    else:
        fits = env.item_vectors()[[env.item_index[r["item_id"]] for r in records]] @ profile
    items = [_evidence(r, float(f), f"{_tags(r)}; fit {f:.2f}") for r, f in zip(records, fits, strict=True)]
    themes: dict[str, int] = {}
    for record in records:
        for category in record["categories"]:
            themes[category] = themes.get(category, 0) + 1
    common = sorted(themes.items(), key=lambda pair: (-pair[1], pair[0]))[:5]
    closest = [records[i] for i in np.argsort(-fits, kind="stable")[:3]]
    facets = [facet("candidate_themes", ", ".join(f"{c} ({n})" for c, n in common))] if common else []
    facets.append(facet("closest_to_history", title_list(closest, 3)))
    facets.append(facet("profile_basis", f"{len(rows)} recent interactions"))
    summary = (
        f"Closest in content to the recent history: {title_list(closest, 3)}."
        if profile is not None
        else "No visible history: candidates described, not matched."
    )
    confidence = 0.6 if profile is not None else 0.1
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    text = f"The user's {len(rows)} most recent interactions (newest first):\n{history_block(rows)}\n\n"
    text += candidate_block([(r, "", _review_lines(episode, r["item_id"])) for r in records])
    notes = () if episode.domain["categories"] else ("no categories: tags from title words",)
    stats = {"profile_items": float(len(rows))}
    return Fetched(text, output, stats, tuple(episode.candidates), notes=notes)


def _profile_line(record: dict[str, Any]) -> str:
    parts = [f"{record['interactions']} interactions"]
    if record["mean_rating"] is not None:
        parts.append(f"mean rating {record['mean_rating']:.2f}")
    for key in ("price", "stars", "review_count"):
        if value := record["attributes"].get(key):
            parts.append(f"{key} {value}")
    return ", ".join(parts)


def item_profile(episode: Episode) -> Fetched:
    """ItemProfile: popularity and rating of every candidate, relative to the other candidates."""
    corpus = episode.scope.corpus
    records = fetch_items(episode, list(episode.candidates))
    counts = np.array([r["interactions"] for r in records], dtype=np.float64)
    top = float(counts.max()) if len(counts) else 0.0
    popularity = np.log1p(counts) / math.log1p(top) if top > 0 else np.zeros(len(records))
    rated = episode.domain["ratings"]
    scores = []
    for record, pop in zip(records, popularity, strict=True):
        if not rated:
            scores.append(float(pop))
            continue
        n = record["interactions"]
        mean = record["mean_rating"] if record["mean_rating"] is not None else corpus.rating_mean
        bayes = (n * mean + PRIOR_WEIGHT * corpus.rating_mean) / (n + PRIOR_WEIGHT)
        scores.append(0.75 * float(pop) + 0.25 * bayes / corpus.rating_max)
    items = [_evidence(r, s, _profile_line(r)) for r, s in zip(records, scores, strict=True)]
    cold = int((counts <= COLD_INTERACTIONS).sum())
    best = [records[i] for i in np.argsort(-np.array(scores), kind="stable")[:3]]
    facets = [
        facet("popularity_range", f"{counts.min():.0f} to {top:.0f} visible interactions"),
        facet("cold_candidates", f"{cold} of {len(records)} have at most {COLD_INTERACTIONS} interactions"),
        facet("best_profiled", title_list(best, 3)),
    ]
    summary = f"Most popular and best rated: {title_list(best, 3)}; {cold} cold candidates."
    output = ToolOutput(facets=facets, confidence=0.7, summary=summary, items=items)
    text = candidate_block([(r, _profile_line(r), []) for r in records])
    stats = {"cold_candidates": float(cold), "max_interactions": top}
    notes = () if rated else ("no ratings: popularity only",)
    return Fetched(text, output, stats, tuple(episode.candidates), notes=notes)
