"""Features a method switched off because the dataset lacks a field, and their reducer.

Every entry reads `feature: reason` (e.g. `category_facets: no item categories`); the node that
switches a feature off writes it to the state's `degraded` list and posts the same words to the
blackboard, and `recgraph bench` lists them per method in metrics.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from state.blackboard import post


def merge_degraded(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Reducer: the union of switched-off features, in first-seen order (nodes may repeat one)."""
    return list(dict.fromkeys([*(left or []), *(right or [])]))


def degraded_update(role: str, entries: Sequence[str]) -> dict[str, Any]:
    """The state update of node `role` switching off `entries`: the list and one blackboard post
    (nothing when `entries` is empty)."""
    if not entries:
        return {}
    return {"degraded": list(entries), "trace": [post(role, "switched off: " + "; ".join(entries))]}


def with_degraded(
    update: dict[str, Any], role: str, entries: Sequence[str], *, before: bool = True
) -> dict[str, Any]:
    """`update` plus `degraded_update(role, entries)`. The note is posted before the update's own
    posts (so a node's latest post stays its result, which downstream agents read), or after them
    with `before=False`."""
    extra = degraded_update(role, entries)
    if not extra:
        return update
    own = update.get("trace", [])
    trace = [*extra["trace"], *own] if before else [*own, *extra["trace"]]
    return {**update, "degraded": extra["degraded"], "trace": trace}
