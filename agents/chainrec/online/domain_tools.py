"""AuthorPreference and GeoContext: domain tools, feasible only when the dataset has authors / locations.

Fallbacks: AuthorPreference counts the authors (and series) of the visible history, each item
weighted by its rating over the top rating (1 without ratings); a candidate's affinity is
min(1, weighted count of history items sharing an author / 3). Authors are flat names in the
attributes or Goodreads' author objects (keyed by `author_id`, every credited role) and series ids.
GeoContext infers the user's location (coordinates in the user's attributes, else the median latitude
and longitude of the visited places) and scores a candidate exp(−d / `chainrec_geo_scale_km`) by the
haversine distance d, halved when the place is marked closed; without coordinates on either side it
compares cities: the user's most visited "City, ST" scores `SAME_CITY`, another city `OTHER_CITY`,
no city 0.5. With opening hours (Yelp `hours`) the score is multiplied by 0.5 + 0.5 · the hours fit,
the share of the user's recent visit windows during which the candidate is open
(agents/chainrec/online/opening_hours.py); a candidate without hours keeps its score.
"""

from __future__ import annotations

import math
from collections import Counter
from statistics import median
from typing import Any

from agents.chainrec.online.evidence import title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.opening_hours import hours_fit, usual_days, visit_windows
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.chainrec.online.user_tools import fetch_history
from prompts.chainrec import candidate_block, history_block
from state.chainrec.schemas import NOTE_CHARS, ItemEvidence, ToolOutput
from tools.chainrec.episode_corpus import authors_in, city_in, location_in
from world.loaders.agentsociety_fields import contributors

EARTH_RADIUS_KM = 6371.0088
AUTHOR_SATURATION = 3.0
"""AuthorPreference: this many (rating-weighted) history items by an author give affinity 1."""
MIN_PLACES = 3
"""GeoContext: fewer located visits than this halve the confidence in the inferred location."""
SAME_CITY = 0.8
"""GeoContext without coordinates: score of a candidate in the user's most visited city."""
OTHER_CITY = 0.3
"""GeoContext without coordinates: score of a candidate in another city."""


def haversine_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in km between two (latitude, longitude) points in degrees."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(h)))


def _keys(record: dict[str, Any]) -> list[str]:
    """The author / series keys of a `get_item` record (flat names and Goodreads' objects)."""
    return authors_in(record["attributes"], record.get("structured"))


def _labels(records: list[dict[str, Any]]) -> dict[str, str]:
    """key -> how to name it: an author object's name (or id) with its role."""
    return {key: label for r in records for key, label in contributors(r.get("structured") or {})}


def _authors(record: dict[str, Any], labels: dict[str, str]) -> str:
    return ", ".join(labels.get(key, key) for key in _keys(record)) or "unknown"


def author_preference(episode: Episode) -> Fetched:
    """AuthorPreference: favoured authors/series and each candidate's affinity to them."""
    rows = fetch_history(episode, episode.ctx.chainrec_long_items)["interactions"]
    history = fetch_items(episode, [row["item_id"] for row in rows])
    top = episode.scope.corpus.rating_max
    weights: Counter[str] = Counter()
    for row, record in zip(rows, history, strict=True):
        for key in _keys(record):
            weights[key] += row["rating"] / top if row.get("rating") is not None else 1.0
    candidates = fetch_items(episode, list(episode.candidates))
    labels = _labels(history + candidates)
    items, matched = [], 0
    for record in candidates:
        shared = sum(weights.get(key, 0.0) for key in _keys(record))
        matched += shared > 0
        note = f"by {_authors(record, labels)}; {shared:.1f} weighted history items"
        items.append(
            ItemEvidence(
                item_id=record["item_id"],
                score=round(min(1.0, shared / AUTHOR_SATURATION), 4),
                note=note[:NOTE_CHARS],
            )
        )
    favourites = [(labels.get(key, key), weight) for key, weight in weights.most_common(5)]
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
    authored = "\n".join(f"{line} | by {_authors(r, labels)}" for line, r in zip(lines, history, strict=True))
    text = f"The user's history with authors (newest first):\n{authored or '(none)'}\n\n"
    text += candidate_block([(r, f"by {_authors(r, labels)}", []) for r in candidates])
    stats = {
        "authored_history": float(sum(1 for r in history if _keys(r))),
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


def _home_city(attributes: dict[str, str], history: list[dict[str, Any]]) -> str | None:
    """The user's city: the profile's, else the most visited place's (ties: the most recent)."""
    if own := city_in(attributes):
        return own
    counts = Counter(city for record in history if (city := city_in(record["attributes"])))
    return max(counts, key=lambda city: counts[city]) if counts else None


def _place_score(
    record: dict[str, Any], home: tuple[float, float] | None, home_city: str | None, scale: float
) -> tuple[float, str, float | None]:
    """(score before opening hours, note, distance in km when both sides have coordinates)."""
    attributes = record["attributes"]
    closed = 0.5 if attributes.get("is_open", "").lower() in ("false", "0") else 1.0
    marked = ", marked closed" if closed < 1 else ""
    point = location_in(attributes)
    if home is not None and point is not None:
        distance = haversine_km(home, point)
        return math.exp(-distance / scale) * closed, f"{distance:.1f} km{marked}", distance
    city = city_in(attributes)
    if home_city is None or city is None:
        return 0.5, "no location", None
    if city == home_city:
        return SAME_CITY * closed, f"in {city}{marked}", None
    return OTHER_CITY * closed, f"in {city}, not {home_city}{marked}", None


def geo_context(episode: Episode) -> Fetched:
    """GeoContext: the user's usual location and opening times, and every candidate's distance from
    there and whether it is open when the user usually goes out."""
    user = fetch_history(episode, episode.ctx.chainrec_long_items)
    rows = user["interactions"]
    history = fetch_items(episode, [row["item_id"] for row in rows])
    home, basis = _home(user["attributes"], history)
    home_city = _home_city(user["attributes"], history)
    windows = visit_windows(rows, history)
    candidates = fetch_items(episode, list(episode.candidates))
    items, distances, placed, fits = [], [], 0, []
    for record in candidates:
        score, note, distance = _place_score(record, home, home_city, episode.ctx.chainrec_geo_scale_km)
        placed += note != "no location"
        if distance is not None:
            distances.append(distance)
        fit = hours_fit(record, windows)
        if fit is not None:
            fits.append(fit)
            score *= 0.5 + 0.5 * fit
            note += f"; open {fit:.0%} of the user's usual visit times"
        items.append(ItemEvidence(item_id=record["item_id"], score=round(score, 4), note=note[:NOTE_CHARS]))
    located_visits = sum(1 for r in history if location_in(r["attributes"]) or city_in(r["attributes"]))
    where = f"{home[0]:.4f}, {home[1]:.4f} ({basis})" if home else basis
    facets = [
        facet("inferred_location", where),
        facet("located_candidates", f"{placed} of {len(candidates)}"),
    ]
    if home_city:
        facets.append(facet("usual_city", home_city))
    if distances:
        facets.append(facet("median_distance_km", f"{median(distances):.1f}"))
    open_usually = sum(1 for fit in fits if fit >= 0.5)
    if fits:
        facets.append(facet("usual_days", usual_days(windows)))
        facets.append(facet("open_at_usual_times", f"{open_usually} of {len(fits)} with opening hours"))
    ranked = sorted(range(len(items)), key=lambda i: -items[i].score)
    nearest = [candidates[i] for i in ranked[:3]]
    summary = f"Nearest candidates: {title_list(nearest, 3)}." if placed else "No usable locations."
    if fits:
        summary += (
            f" {open_usually} of {len(fits)} candidates with hours are open when the user usually goes out."
        )
    coverage = max(placed, len(fits)) / len(candidates) if candidates else 0.0
    profile = location_in(user["attributes"]) or city_in(user["attributes"])
    confidence = round(coverage * (1.0 if located_visits >= MIN_PLACES or profile else 0.5), 2)
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    text = f"The user's visited places (newest first):\n{history_block(rows)}\nInferred location: {where}\n"
    text += f"Usual days out: {usual_days(windows)}\n\n" if fits else "\n"
    text += candidate_block([(r, e.note, []) for r, e in zip(candidates, items, strict=True)])
    stats = {
        "located_history": float(located_visits),
        "located_candidates": float(len(distances)),
        "hours_candidates": float(len(fits)),
    }
    needed = home is not None or home_city is not None or bool(fits)
    return Fetched(text, output, stats, tuple(episode.candidates), needed=needed)
