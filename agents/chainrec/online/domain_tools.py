"""AuthorPreference and GeoContext: domain tools, feasible only when the dataset has authors / locations.

Fallbacks: AuthorPreference counts the authors (and series) of the visible history, each item
weighted by its rating over the top rating (1 without ratings); a candidate's affinity is
min(1, weighted count of history items sharing an author / 3). GeoContext infers the user's location
(coordinates in the user's attributes, else the median latitude and longitude of the visited places)
and scores a candidate exp(−d / `chainrec_geo_scale_km`) by the haversine distance d, halved when the
place is marked closed; a candidate without a location scores 0.5.
"""

from __future__ import annotations

import math
from collections import Counter
from statistics import median
from typing import Any

from agents.chainrec.online.evidence import title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.chainrec.online.user_tools import fetch_history
from prompts.chainrec import candidate_block, history_block
from state.chainrec.schemas import NOTE_CHARS, ItemEvidence, ToolOutput
from tools.chainrec.episode_corpus import authors_in, location_in

EARTH_RADIUS_KM = 6371.0088
AUTHOR_SATURATION = 3.0
"""AuthorPreference: this many (rating-weighted) history items by an author give affinity 1."""
MIN_PLACES = 3
"""GeoContext: fewer located visits than this halve the confidence in the inferred location."""


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in km between two (latitude, longitude) points in degrees."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def _authors(record: dict[str, Any]) -> str:
    return ", ".join(authors_in(record["attributes"])) or "unknown"


def author_preference(episode: Episode) -> Fetched:
    """AuthorPreference: favoured authors/series and each candidate's affinity to them."""
    rows = fetch_history(episode, episode.ctx.chainrec_long_items)["interactions"]
    history = fetch_items(episode, [row["item_id"] for row in rows])
    top = episode.scope.corpus.rating_max
    weights: Counter[str] = Counter()
    for row, record in zip(rows, history, strict=True):
        for name in authors_in(record["attributes"]):
            weights[name] += row["rating"] / top if row.get("rating") is not None else 1.0
    candidates = fetch_items(episode, list(episode.candidates))
    items, matched = [], 0
    for record in candidates:
        shared = sum(weights.get(name, 0.0) for name in authors_in(record["attributes"]))
        matched += shared > 0
        note = f"by {_authors(record)}; {shared:.1f} weighted history items"
        items.append(
            ItemEvidence(
                item_id=record["item_id"],
                score=round(min(1.0, shared / AUTHOR_SATURATION), 4),
                note=note[:NOTE_CHARS],
            )
        )
    favourites = weights.most_common(5)
    facets = [
        facet("favourite_authors", ", ".join(f"{n} ({w:.1f})" for n, w in favourites) or "none"),
        facet("candidates_by_favourites", f"{matched} of {len(candidates)}"),
    ]
    summary = (
        f"Favours {', '.join(n for n, _ in favourites[:3])}; {matched} candidates share an author."
        if favourites
        else "No author information in the visible history."
    )
    output = ToolOutput(facets=facets, confidence=0.8 if matched else 0.3, summary=summary, items=items)
    lines = history_block(rows).splitlines() if rows else []
    authored = "\n".join(f"{line} | by {_authors(r)}" for line, r in zip(lines, history, strict=True))
    text = f"The user's history with authors (newest first):\n{authored or '(none)'}\n\n"
    text += candidate_block([(r, f"by {_authors(r)}", []) for r in candidates])
    stats = {
        "authored_history": float(sum(1 for r in history if authors_in(r["attributes"]))),
        "author_matches": float(matched),
    }
    return Fetched(text, output, stats, tuple(episode.candidates))


def _home(
    attributes: dict[str, str], history: list[dict[str, Any]]
) -> tuple[tuple[float, float] | None, str]:
    """The user's usual location and where it comes from."""
    if own := location_in(attributes):
        return own, "the user's profile"
    points = [p for record in history if (p := location_in(record["attributes"]))]
    if not points:
        return None, "no visited place has a location"
    where = (median(p[0] for p in points), median(p[1] for p in points))
    return where, f"the median of {len(points)} visited places"


def geo_context(episode: Episode) -> Fetched:
    """GeoContext: the user's usual location and every candidate's distance from it."""
    user = fetch_history(episode, episode.ctx.chainrec_long_items)
    rows = user["interactions"]
    history = fetch_items(episode, [row["item_id"] for row in rows])
    home, basis = _home(user["attributes"], history)
    candidates = fetch_items(episode, list(episode.candidates))
    scale = episode.ctx.chainrec_geo_scale_km
    items, distances = [], []
    for record in candidates:
        point = location_in(record["attributes"])
        closed = record["attributes"].get("is_open", "").lower() in ("false", "0")
        if home is None or point is None:
            items.append(ItemEvidence(item_id=record["item_id"], score=0.5, note="no location"))
            continue
        distance = haversine_km(home, point)
        distances.append(distance)
        score = math.exp(-distance / scale) * (0.5 if closed else 1.0)
        note = f"{distance:.1f} km" + (", marked closed" if closed else "")
        items.append(ItemEvidence(item_id=record["item_id"], score=round(score, 4), note=note))
    located_visits = sum(1 for r in history if location_in(r["attributes"]))
    where = f"{home[0]:.4f}, {home[1]:.4f} ({basis})" if home else basis
    facets = [
        facet("inferred_location", where),
        facet("located_candidates", f"{len(distances)} of {len(candidates)}"),
    ]
    if distances:
        facets.append(facet("median_distance_km", f"{median(distances):.1f}"))
    ranked = sorted(range(len(items)), key=lambda i: -items[i].score)
    nearest = [candidates[i] for i in ranked[:3]]
    summary = f"Nearest candidates: {title_list(nearest, 3)}." if distances else "No usable locations."
    coverage = len(distances) / len(candidates) if candidates else 0.0
    confidence = round(
        coverage * (1.0 if located_visits >= MIN_PLACES or location_in(user["attributes"]) else 0.5), 2
    )
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    text = f"The user's visited places (newest first):\n{history_block(rows)}\nInferred location: {where}\n\n"
    text += candidate_block([(r, e.note, []) for r, e in zip(candidates, items, strict=True)])
    stats = {"located_history": float(located_visits), "located_candidates": float(len(distances))}
    return Fetched(text, output, stats, tuple(episode.candidates), needed=home is not None)
