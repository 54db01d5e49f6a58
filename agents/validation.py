"""The validation pieces every agent shares: one vocabulary of repair and error kinds, the
known-unique id filter, and the text cutter.

Kinds are counted per agent in `AgentUsage` and land in metrics.json, so every kind an agent
reports must be named here (tests/test_validation.py collects them from the code).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable
from typing import Final, Literal, TypeVar, get_args

RepairKind = Literal[
    "unknown_id",
    "duplicate_id",
    "missing_id",
    "rationale_unknown_id",
    "rationale_duplicate_id",
    "unknown_neighbour",
    "duplicate_neighbour",
    "score_clipped",
    "confidence_clipped",
    "weight_clipped",
    "invalid_score",
    "duplicate_facet",
    "empty_facet",
    "extra_facet",
    "invalid_edge",
    "empty_update",
    "fanout_cut",
    "memory_cut",
    "missing_name",
    "missing_domain",
    "named_item",
    "links_without_should_link",
    "updates_without_should_evolve",
    "unexpected_items",
    "unknown_action",
    "infeasible_action",
]
"""A fix applied to an answer that was kept (the answer is used, the count says what was fixed)."""

ErrorKind = Literal[
    "invalid_output",
    "truncated",
    "malformed_json",
    "schema_invalid",
    "empty_answer",
    "no_valid_ids",
    "no_facets",
    "invalid_score",
    "invalid_rules",
    "empty_action",
    "invalid_confidence",
    "timeout",
    "connection",
    "http_429",
]
"""Why an attempt was rejected: transport failures, unusable JSON (`schema_invalid` only for
answers that break the pydantic schema) and semantic failures such as `empty_answer`.
HTTP status failures are `http_<status>` (see `is_error_kind`)."""

REPAIR_KINDS: Final[frozenset[str]] = frozenset(get_args(RepairKind))
"""Every repair kind."""
ERROR_KINDS: Final[frozenset[str]] = frozenset(get_args(ErrorKind))
"""Every error kind except the open family `http_<status>`."""

UNKNOWN_ID: Final = "unknown_id"
DUPLICATE_ID: Final = "duplicate_id"
MISSING_ID: Final = "missing_id"
RATIONALE_UNKNOWN_ID: Final = "rationale_unknown_id"
RATIONALE_DUPLICATE_ID: Final = "rationale_duplicate_id"
UNKNOWN_NEIGHBOUR: Final = "unknown_neighbour"
DUPLICATE_NEIGHBOUR: Final = "duplicate_neighbour"
SCORE_CLIPPED: Final = "score_clipped"
CONFIDENCE_CLIPPED: Final = "confidence_clipped"
WEIGHT_CLIPPED: Final = "weight_clipped"
INVALID_SCORE: Final = "invalid_score"
DUPLICATE_FACET: Final = "duplicate_facet"
EMPTY_FACET: Final = "empty_facet"
EXTRA_FACET: Final = "extra_facet"
INVALID_EDGE: Final = "invalid_edge"
EMPTY_UPDATE: Final = "empty_update"
FANOUT_CUT: Final = "fanout_cut"
MEMORY_CUT: Final = "memory_cut"
MISSING_NAME: Final = "missing_name"
MISSING_DOMAIN: Final = "missing_domain"

INVALID_OUTPUT: Final = "invalid_output"
TRUNCATED: Final = "truncated"
MALFORMED_JSON: Final = "malformed_json"
SCHEMA_INVALID: Final = "schema_invalid"
EMPTY_ANSWER: Final = "empty_answer"
NO_VALID_IDS: Final = "no_valid_ids"
NO_FACETS: Final = "no_facets"
INVALID_RULES: Final = "invalid_rules"
TIMEOUT: Final = "timeout"
CONNECTION: Final = "connection"

_HTTP_KIND = re.compile(r"http_\d{3}")


def http_error_kind(status: int) -> str:
    """The error kind of an HTTP status failure."""
    return f"http_{status}"


def is_error_kind(kind: str) -> bool:
    """Whether `kind` belongs to the error vocabulary."""
    return kind in ERROR_KINDS or bool(_HTTP_KIND.fullmatch(kind))


E = TypeVar("E")
T = TypeVar("T")


def keep_known_unique(
    entries: Iterable[E],
    allowed: Collection[str],
    *,
    key: Callable[[E], str],
    keep: Callable[[str, E], T | None],
    unknown: str = UNKNOWN_ID,
    duplicate: str = DUPLICATE_ID,
) -> tuple[dict[str, T], list[str]]:
    """The entries whose id (`key`) is in `allowed`, first one per id, in the order given.

    An id outside `allowed` adds the `unknown` repair, an id already kept the `duplicate`
    repair. `keep(id, entry)` builds the kept value, or returns None to skip the entry (it
    then records its own repair, and a later entry with the same id may still be kept).
    """
    kept: dict[str, T] = {}
    repairs: list[str] = []
    for entry in entries:
        entry_id = key(entry)
        if entry_id not in allowed:
            repairs.append(unknown)
        elif entry_id in kept:
            repairs.append(duplicate)
        elif (value := keep(entry_id, entry)) is not None:
            kept[entry_id] = value
    return kept, repairs


def missing_ids(
    kept: Collection[str], expected: Iterable[str], kind: str = MISSING_ID
) -> tuple[list[str], list[str]]:
    """The ids of `expected` (in its order, once each) that `kept` lacks, and one `kind` repair each."""
    missing = list(dict.fromkeys(i for i in expected if i not in kept))
    return missing, [kind] * len(missing)


def cut_text(text: str, limit: int, *, rstrip: bool = True, collapse: bool = False) -> str:
    """`text` when it fits in `limit` characters, else its first `limit - 1` and an ellipsis.

    `collapse` first joins runs of whitespace into single spaces; `rstrip` drops the spaces
    before the ellipsis (memory texts), prompt lines keep them.
    """
    if collapse:
        text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    return (head.rstrip() if rstrip else head) + "…"
