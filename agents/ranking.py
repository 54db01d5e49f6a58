"""Turning a model's proposed ranking into a valid permutation of the candidates, and saying how
much of a final ranking the model decided.

A ranking's positions come from one of three origins: "model" (an id the model placed itself),
"repair" (an id the model left out, appended by validation in `left_out_order`, the one rule every
LLM ranker follows) and
"fallback" (the deterministic answer: the LLM failed, or the backend is heuristic).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final

import numpy as np

from agents.base import InvalidAnswer
from agents.validation import NO_VALID_IDS, constrained_schema, keep_known_unique, missing_ids
from state.schemas import RankedList

LEFT_OUT_RULE: Final = (
    "ids a model leaves out follow its ranking in a random order seeded by the candidate set, the "
    "same for every method; each is a repair position"
)
"""How every LLM ranker completes a partial ranking (`left_out_order`); docs/benchmarking.md."""


def left_out_order(candidates: Iterable[str]) -> list[str]:
    """The candidates in the one order every LLM ranker appends the ids its model left out: a
    permutation seeded by the set of candidates alone (not their given order, not any method's
    scores), so the same candidates get the same order in every method and run."""
    pool = sorted(set(candidates))
    digest = hashlib.sha256("\x1f".join(pool).encode()).digest()
    order = np.random.default_rng(int.from_bytes(digest[:8], "big")).permutation(len(pool))
    return [pool[i] for i in order]


def repair_ranking(proposed: Sequence[str], candidates: Sequence[str]) -> tuple[list[str], list[str]]:
    """A permutation of exactly `candidates` that keeps the model's order where it is valid.

    Unknown and repeated ids are dropped; candidates the model left out are appended in
    `left_out_order` (`LEFT_OUT_RULE`). Returns the ranking and the repair kinds applied (one entry
    per id).
    Raises `InvalidAnswer` when not a single proposed id is a candidate — nothing to keep.
    """
    kept, repairs = keep_known_unique(
        proposed, set(candidates), key=lambda raw: str(raw).strip(), keep=lambda item, _: item
    )
    if not kept:
        raise InvalidAnswer(
            "none of the ids in 'ranking' is a candidate; use the ids in square brackets",
            kind=NO_VALID_IDS,
        )
    missing, filled = missing_ids(kept, left_out_order(candidates))
    ranking = [*kept, *missing]
    repairs += filled
    return ranking, repairs


def ranking_json_schema(candidates: Sequence[str], reason_chars: int = 200) -> dict[str, Any]:
    """`RankedList` as a JSON schema whose ids are an enum of exactly these candidates.

    Grammar-constrained decoders (llama.cpp) then cannot invent ids or run on forever.
    """
    n = len(candidates)
    return constrained_schema(
        RankedList,
        {
            "ranking": {"minItems": n, "maxItems": n},
            "ranking[]": {"enum": list(candidates)},
            "reason": {"maxLength": reason_chars},
        },
    )


def clip_score(value: float, low: float, high: float) -> tuple[float, bool]:
    """`value` clipped into [low, high], and whether clipping was needed."""
    clipped = min(max(value, low), high)
    return clipped, clipped != value


ORIGINS: Final = ("model", "repair", "fallback")
"""Where a position of a ranking came from (see the module docstring)."""
CUTOFFS: Final[dict[str, int | None]] = {"top1": 1, "top5": 5, "all": None}
"""The heads of a ranking whose origins are counted (None: every position)."""


def ranking_origin(ranking: Sequence[str], model_ids: Collection[str], source: str) -> dict[str, Any]:
    """How many of the first 1, 5 and all positions of `ranking` came from the model, from repair
    and from the fallback, given the ranker's `source` ("llm", "fallback" or "heuristic") and the
    ids the model itself placed: `{"source": s, "top1": {"model": m, "repair": r, "fallback": f},
    "top5": {...}, "all": {...}}`."""
    own = set(model_ids) if source == "llm" else set()
    if source == "llm":
        origins = ["model" if item in own else "repair" for item in ranking]
    else:
        origins = ["fallback"] * len(ranking)
    counted: dict[str, Any] = {"source": source}
    for name, k in CUTOFFS.items():
        head = origins[:k] if k is not None else origins
        counted[name] = {origin: head.count(origin) for origin in ORIGINS}
    return counted


def ranker_record(records: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The usage record of the agent that ranked the candidates (the last one with `model_ids`), or
    None when no agent ranked them with an LLM ranker (classic methods)."""
    found = None
    for record in records:
        if record.get("model_ids") is not None:
            found = record
    return found


def output_origin(ranking: Sequence[str], records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """`ranking_origin` of a graph's final ranking from its usage records (None without a ranker)."""
    record = ranker_record(records)
    if record is None:
        return None
    return ranking_origin(ranking, record["model_ids"], record.get("source", "heuristic"))


def origin_note(origin: Mapping[str, Any]) -> str:
    """One sentence on how much of a ranking an LLM decided, e.g. "the model placed 2 of the top 5
    (2 of 10 in all); validation appended the other 8 in the seeded left-out order"."""
    every = origin["all"]
    total = sum(every.values())
    if origin["source"] != "llm":
        return f"the {origin['source']} answer placed all {total}"
    if every["repair"] == 0:
        return f"the model placed all {total}"
    top5 = origin["top5"]
    return (
        f"the model placed {top5['model']} of the top {sum(top5.values())} ({every['model']} of {total} in "
        f"all); validation appended the other {every['repair']} in the seeded left-out order"
    )


def with_ranking_origin(update: dict[str, Any], model_ids: list[str] | None, agent: str) -> dict[str, Any]:
    """A ranking agent node's state update with where its ranking came from: `ranking_origin` in
    `agent`'s usage record and, when the model answered, `origin_note` after its blackboard post.
    Unchanged for other agents (`model_ids` None) and updates without a ranking."""
    if model_ids is None or "ranking" not in update:
        return update
    records = [dict(r) if r.get("agent") == agent else r for r in update.get("usage", [])]
    mine = [r for r in records if r.get("agent") == agent]
    if not mine:
        return update
    origin = ranking_origin(update["ranking"], model_ids, mine[-1].get("source", "heuristic"))
    mine[-1]["ranking_origin"] = origin
    changed = {**update, "usage": records}
    posts = list(update.get("trace", []))
    if origin["source"] == "llm" and posts:
        at = max((i for i, post in enumerate(posts) if post.get("role") == agent), default=len(posts) - 1)
        posts[at] = {**posts[at], "content": f"{posts[at]['content']} · {origin_note(origin)}"}
        changed["trace"] = posts
    return changed
