"""Which optional fields a dataset actually has, and how a method words a feature it switches off.

Real catalogs often carry titles only (no categories, years, descriptions, authors, ratings or
reviews) and histories with order but no timestamps. Methods ask `missing_fields` which of the
fields their features need are absent and switch those features off, naming each one with
`switched_off` ("category_facets: no item categories"); text similarity over titles takes over.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from world.data import Dataset

if TYPE_CHECKING:
    from world.environment import Environment

FIELDS: dict[str, str] = {
    "categories": "no item categories",
    "years": "no item years",
    "descriptions": "no item descriptions",
    "authors": "no item authors",
    "ratings": "no ratings",
    "reviews": "no reviews",
    "timestamps": "no timestamps (interaction order only)",
}
"""Optional field -> how its absence is worded in a switched-off feature."""

AUTHOR_KEYS = ("author", "authors", "writer", "artist", "brand", "creator")


def present_fields(dataset: Dataset) -> frozenset[str]:
    """The optional `FIELDS` at least one item or interaction of `dataset` carries (one pass)."""
    found: set[str] = {"timestamps"} if dataset.has_time else set()
    for item in dataset.items.values():
        if item.categories:
            found.add("categories")
        if item.description:
            found.add("descriptions")
        if item.attributes.get("year"):
            found.add("years")
        if any(item.attributes.get(k) for k in AUTHOR_KEYS):
            found.add("authors")
    for event in dataset.interactions:
        if event.rating is not None:
            found.add("ratings")
        if event.review:
            found.add("reviews")
        if {"ratings", "reviews"} <= found:
            break
    return frozenset(found)


def switched_off(present: frozenset[str], needs: Mapping[str, str]) -> list[str]:
    """`feature: reason` for every feature in `needs` (feature -> the field it needs) whose field is
    not in `present`, in `needs` order."""
    unknown = [f for f in needs.values() if f not in FIELDS]
    if unknown:
        raise KeyError(f"unknown dataset field {unknown[0]!r}; known: {', '.join(FIELDS)}")
    return [f"{feature}: {FIELDS[field]}" for feature, field in needs.items() if field not in present]


def environment_fields(env: Environment) -> frozenset[str]:
    """`present_fields` of the environment's dataset, computed once per process."""
    return env.resource("present_fields", lambda: present_fields(env.dataset))


def degraded_features(env: Environment, needs: Mapping[str, str]) -> list[str]:
    """`switched_off` for the environment's dataset: the features in `needs` it cannot support."""
    return switched_off(environment_fields(env), needs)
