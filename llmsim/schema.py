"""Schema-valid fake answers for the simulated OpenAI server (standard library only).

`fill_schema` turns a JSON schema (pydantic v2 `model_json_schema()` output, or the
`parameters` of an OpenAI tool) into a value that validates against it, and is aware of
candidate item ids: id arrays get a permutation of the candidates taken from the prompt.
The `mode` argument deliberately damages those id arrays the way a weak LLM does.
"""

from __future__ import annotations

import math
import random
import re
from typing import Any

ID_MODES: tuple[str, ...] = ("normal", "echo", "unknown_ids", "duplicate_ids")
"""`fill_schema` modes: shuffled ids, ids in input order, one hallucinated id, one duplicated id."""

_ID_LINE = re.compile(r"^\s*\[(?P<id>[^\]\s]+)\]")
_HEADER = re.compile(r"^\s*candidates", re.IGNORECASE)
_VOCABULARY = (
    "prefers steady recent picks with strong ratings and returns to familiar genres while trying "
    "new releases from related styles often in short bursts after long quiet periods mostly "
    "acclaimed titles sometimes lighter choices broad taste narrow focus repeated themes"
)
_WORDS = tuple(_VOCABULARY.split())
"""Vocabulary of the simulated sentences (neutral words; no ids, no instructions)."""
_FORMATS = {
    "date-time": "2024-01-01T00:00:00Z",
    "date": "2024-01-01",
    "time": "00:00:00",
    "email": "sim@example.com",
    "uri": "https://example.com/sim",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
_MAX_DEPTH = 24


def extract_candidate_ids(text: str) -> list[str]:
    """Return the candidate ids listed in a prompt, in order of appearance, without duplicates.

    An id is the bracketed token at the start of a line (`[42] Some title`). When a line starts
    with `Candidates` (case-insensitive, leading blanks allowed) only lines after the first such
    header count; without a header every matching line of the text counts.
    """
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if _HEADER.match(line):
            lines = lines[index + 1 :]
            break
    ids: list[str] = []
    for line in lines:
        match = _ID_LINE.match(line)
        if match and match["id"] not in ids:
            ids.append(match["id"])
    return ids


def arrange_ids(candidate_ids: list[str], rng: random.Random, mode: str = "normal") -> list[str]:
    """Order candidate ids for one id-aware array according to `mode` (see `ID_MODES`).

    `normal` is a seeded shuffle that never equals the input order when there are two or more
    ids (so `echo` stays detectable); `echo` is the input order; `unknown_ids` replaces one id
    of the shuffle with `ghost-<n>` (not a candidate); `duplicate_ids` overwrites one id with a
    copy of another, so one candidate is missing (a single id is simply repeated).
    """
    if mode not in ID_MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(ID_MODES)}")
    ids = list(candidate_ids)
    if mode == "echo" or not ids:
        return ids
    rng.shuffle(ids)
    if len(ids) > 1 and ids == list(candidate_ids):
        ids = ids[1:] + ids[:1]
    if mode == "unknown_ids":
        n = 1
        while f"ghost-{n}" in candidate_ids:
            n += 1
        ids[rng.randrange(len(ids))] = f"ghost-{n}"
    elif mode == "duplicate_ids":
        if len(ids) == 1:
            return ids * 2
        target, source = rng.sample(range(len(ids)), 2)
        ids[target] = ids[source]
    return ids


class _Filler:
    """One schema walk; counts the id-aware arrays it produced."""

    def __init__(self, root: dict[str, Any], ids: list[str], rng: random.Random, mode: str) -> None:
        self.root = root
        self.ids = ids
        self.rng = rng
        self.mode = mode
        self.id_arrays = 0
        self.arranged: list[str] | None = None
        # Sentences draw from their own generator, seeded from the request's without consuming it:
        # the ids arrange exactly as they would with no text fields.
        self.words = random.Random(hash(rng.getstate()[1]))
        self.said: set[str] = set()

    def resolve(self, schema: Any) -> dict[str, Any]:
        """Follow `$ref` (JSON pointers into the root) and merge `allOf` parts."""
        seen = 0
        while isinstance(schema, dict) and "$ref" in schema and seen < _MAX_DEPTH:
            ref = schema["$ref"]
            if not ref.startswith("#"):
                raise ValueError(f"only local $ref is supported, got {ref!r}")
            target: Any = self.root
            try:
                for part in [p for p in ref[1:].split("/") if p]:
                    target = target[part.replace("~1", "/").replace("~0", "~")]
            except (KeyError, IndexError, TypeError):
                raise ValueError(f"unresolvable $ref {ref!r}") from None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**target, **rest}
            seen += 1
        if not isinstance(schema, dict):
            return {}
        if "allOf" in schema:
            merged = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                part = self.resolve(part)
                props = {**merged.get("properties", {}), **part.get("properties", {})}
                required = [*merged.get("required", []), *part.get("required", [])]
                merged = {**merged, **part, "properties": props, "required": required}
            if not merged["properties"]:
                merged.pop("properties")
            return merged
        return schema

    def fill(self, schema: Any, name: str | None = None, in_id_array: bool = False, depth: int = 0) -> Any:
        """Return a value valid against `schema`; `name` is the property name, if any."""
        schema = self.resolve(schema)
        if depth > _MAX_DEPTH:
            return None
        for key in ("anyOf", "oneOf"):
            if key in schema:
                branches = [self.resolve(b) for b in schema[key]]
                chosen = next((b for b in branches if b.get("type") != "null"), branches[0])
                rest = {k: v for k, v in schema.items() if k != key}
                return self.fill({**rest, **chosen}, name, in_id_array, depth + 1)
        if "const" in schema:
            return schema["const"]
        if schema.get("enum"):
            return schema["enum"][0]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((t for t in kind if t != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        if kind == "object":
            return self.fill_object(schema, depth)
        if kind == "array":
            return self.fill_array(schema, name, depth)
        if kind in ("integer", "number"):
            return _number(schema, kind == "integer")
        if kind == "boolean":
            return True
        if kind == "null":
            return None
        if name == "item_id" and self.ids and not in_id_array:
            return self.ids[0]
        return _string(schema, self.sentence(str(schema.get("description", ""))))

    def sentence(self, description: str = "") -> str:
        """Distinct text as long as a model would write it: a field its description calls a phrase
        gets 2-6 words, any other a sentence of 6-18 words; never the same text twice in one answer
        (a model's facets, reasons and notes differ), so answers cost plausible tokens."""
        phrase = "phrase" in description.lower()
        low, high, end = (2, 6, "") if phrase else (6, 18, ".")
        while True:
            words = [self.words.choice(_WORDS) for _ in range(self.words.randint(low, high))]
            text = " ".join(words).capitalize() + end
            if text not in self.said:
                self.said.add(text)
                return text

    def fill_object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        """All properties, required ones first."""
        props: dict[str, Any] = schema.get("properties", {})
        required = [k for k in schema.get("required", []) if k in props]
        order = required + [k for k in props if k not in required]
        return {key: self.fill(props[key], key, False, depth + 1) for key in order}

    def fill_array(self, schema: dict[str, Any], name: str | None, depth: int) -> list[Any]:
        """Id-aware arrays get the candidates; other arrays get minItems (or 1) elements."""
        low = int(schema.get("minItems", 0))
        high = schema.get("maxItems")
        prefix = [self.fill(s, None, False, depth + 1) for s in schema.get("prefixItems", [])]
        items = self.resolve(schema.get("items", {}))
        if isinstance(items, dict) and "anyOf" not in items and "oneOf" not in items:
            # An enum of exactly the candidate ids (how recgraph constrains rankings) is id-aware too.
            enum_of_ids = set(items.get("enum", [])) == set(self.ids) if "enum" in items else True
            is_str = items.get("type") == "string" and enum_of_ids and "const" not in items
            lowered = (name or "").lower()
            id_strings = is_str and ("ranking" in lowered or lowered.endswith("ids"))
            id_objects = "item_id" in items.get("properties", {})
            if self.ids and not prefix and (id_strings or id_objects):
                self.id_arrays += 1
                if self.arranged is None:
                    self.arranged = arrange_ids(self.ids, self.rng, self.mode)
                ids = self.arranged
                if high is not None:
                    ids = ids[: int(high)]
                if id_strings:
                    return ids
                out = []
                for item_id in ids:
                    obj = self.fill(items, None, True, depth + 1)
                    obj["item_id"] = item_id
                    out.append(obj)
                return out
        count = max(low, 1, len(prefix))
        if high is not None:
            count = min(count, int(high))
        rest = [self.fill(items, None, False, depth + 1) for _ in range(count - len(prefix))]
        values = (prefix + rest)[:count]
        if schema.get("uniqueItems"):
            values = [f"{v} #{i + 1}" if isinstance(v, str) else v for i, v in enumerate(values)]
        return values


def _string(schema: dict[str, Any], sentence: str) -> str:
    """`sentence` (or a value of the declared format) within minLength/maxLength."""
    text = _FORMATS.get(schema.get("format", ""), sentence)
    low = int(schema.get("minLength", 0))
    if len(text) < low:
        text = (text + " ") * (low // (len(text) + 1) + 1)
    text = text[: max(low, len(text.rstrip()))]
    if "maxLength" in schema:
        text = text[: int(schema["maxLength"])]
    return text


def _number(schema: dict[str, Any], integer: bool) -> int | float:
    """A value inside minimum/maximum and their exclusive variants (midpoint when both exist)."""
    lo, hi = schema.get("minimum"), schema.get("maximum")
    xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
    if isinstance(xlo, bool):  # draft-4 style: the flag makes `minimum` exclusive
        xlo, lo = (lo, None) if xlo else (None, lo)
    if isinstance(xhi, bool):
        xhi, hi = (hi, None) if xhi else (None, hi)
    if integer:
        lows = [math.ceil(lo)] if lo is not None else []
        lows += [math.floor(xlo) + 1] if xlo is not None else []
        highs = [math.floor(hi)] if hi is not None else []
        highs += [math.ceil(xhi) - 1] if xhi is not None else []
        low, high = (max(lows) if lows else None), (min(highs) if highs else None)
        if low is not None and high is not None:
            return (low + high) // 2
        if low is not None:
            return low
        return min(1, high) if high is not None else 1
    low_f = lo if lo is not None else xlo
    high_f = hi if hi is not None else xhi
    if low_f is not None and high_f is not None:
        return (low_f + high_f) / 2
    if low_f is not None:
        return float(low_f) if lo is not None else float(low_f) + 1.0
    if high_f is not None:
        return min(0.5, float(high_f)) if hi is not None else min(0.5, float(high_f) - 1.0)
    return 0.5


def fill_schema(
    schema: dict[str, Any],
    candidate_ids: list[str] | None = None,
    rng: random.Random | None = None,
    mode: str = "normal",
    order: list[str] | None = None,
) -> Any:
    """Return a value valid against the JSON `schema`, filled with the given candidate ids.

    Resolves `$ref` into `$defs`/`definitions` and merges `allOf`; `anyOf`/`oneOf` take the
    first non-null branch, `enum` its first value, `const` its value; objects get every
    property (required first); strings distinct text (a field described as a phrase 2-6 words,
    any other a 6-18-word sentence); numbers a value within the bounds;
    booleans `true`; arrays minItems (or 1) elements, capped by maxItems. Id awareness: an
    array of strings whose property name contains "ranking" or ends with "ids" gets the
    candidate ids ordered by `arrange_ids(candidate_ids, rng, mode)` (one order per call,
    shared by every id-aware array); an array of objects with an `item_id` property gets one
    object per candidate in that order; a string property
    `item_id` elsewhere gets the first candidate. Without candidate ids no array is id-aware.
    `order`, when given, is used instead of `arrange_ids` (the injection fault's bent order).
    """
    filler = _Filler(schema, list(candidate_ids or []), rng or random.Random(0), mode)
    filler.arranged = list(order) if order is not None else None
    return filler.fill(schema)


def count_id_arrays(schema: dict[str, Any], candidate_ids: list[str]) -> int:
    """How many id-aware arrays `fill_schema` produces for `schema` with these candidates."""
    filler = _Filler(schema, list(candidate_ids), random.Random(0), "normal")
    filler.fill(schema)
    return filler.id_arrays
