"""The validation pieces every agent shares: one vocabulary of repair and error kinds, the
known-unique id filter, the text cutter, and request-specific JSON schemas derived from the
pydantic answer models.

Kinds are counted per agent in `AgentUsage` and land in metrics.json, so every kind an agent
reports must be named here (tests/test_validation.py collects them from the code).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from functools import lru_cache
from typing import Any, Final, Literal, TypeVar, get_args

from pydantic import BaseModel

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


def own_ids(proposed: Iterable[object], placed: Iterable[str]) -> list[str]:
    """The ids of a model's raw answer (`proposed`, stripped, first occurrence each, in its order)
    that its repaired answer (`placed`) kept: the part of a ranking the model itself decided."""
    kept = set(placed)
    return [item for item in dict.fromkeys(str(raw).strip() for raw in proposed) if item in kept]


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


_DROPPED_KEYS = ("title", "default")


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """`node` with local `$ref`s replaced by their definitions, titles and defaults dropped, and
    every object closed (`additionalProperties: false`, every property required)."""
    if isinstance(node, list):
        return [_inline(part, defs) for part in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        return _inline({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs)
    out = {k: _inline(v, defs) for k, v in node.items() if k not in _DROPPED_KEYS and k != "$defs"}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    """The sub-schema at a dotted path: `field`, `field[]` (an array's items), `a[].b`."""
    node = schema
    for part in filter(None, path.split(".")):
        name, items = (part[:-2], True) if part.endswith("[]") else (part, False)
        if name:
            node = node["properties"][name]
        if items:
            node = node["items"]
    return node


@lru_cache(maxsize=64)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """pydantic's JSON schema of `model`, generated once per model (it costs milliseconds, paid per
    agent call before); never mutated: `_inline` builds a fresh copy for every caller."""
    return model.model_json_schema(by_alias=True)


def constrained_schema(
    model: type[BaseModel], constraints: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """`model`'s JSON schema, closed and inlined, with request-specific constraints merged in.

    Objects get `additionalProperties: false` and every property required (what strict and
    grammar-constrained decoders need); `$ref`s are inlined, titles and defaults dropped, the
    fields' descriptions kept. `constraints` maps a path (`"ranking"`, `"ranking[]"` for the
    array's items, `"scores[].item_id"`) to keys that replace the derived ones there, e.g.
    `{"ranking[]": {"enum": ids}, "ranking": {"minItems": n, "maxItems": n}}`. A `None` value
    removes a key. Keep long free-text fields without `maxLength` where llama.cpp decodes them:
    it turns `maxLength` into a repetition grammar that is very slow for long strings.
    """
    raw = _model_schema(model)
    schema = _inline(raw, raw.get("$defs", {}))
    for path, values in (constraints or {}).items():
        node = _at(schema, path)
        for key, value in values.items():
            if value is None:
                node.pop(key, None)
            else:
                node[key] = value
    return schema
