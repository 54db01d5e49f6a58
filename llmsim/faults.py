"""The simulator's faults and refusals: which kinds it injects (`--faults`), which request shapes
it refuses (`--refuse`), the headers of its 429s (`--retry-headers`) and its OpenAI-style error
bodies. Standard library only."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

FAULT_KINDS: tuple[str, ...] = (
    "http_429",
    "http_500",
    "timeout",
    "malformed_json",
    "truncated",
    "unknown_ids",
    "duplicate_ids",
    "echo",
    "injection",
)
"""Every fault the server can inject, as named in `--faults` and in `/stats`."""
OPT_IN_FAULTS: frozenset[str] = frozenset({"injection"})
"""Faults `all` leaves out: adversarial content (see `llmsim.injection`) must be asked for by name,
since its symptoms (unknown ids, malformed JSON) would blur the per-kind counts of the others."""
ID_FAULTS: frozenset[str] = frozenset({"unknown_ids", "duplicate_ids", "echo"})
"""Faults that need id-aware output (candidate ids in the prompt and an id array to damage)."""
MALFORMED = '{"ranking": [oops'
"""The `malformed_json` fault's answer."""
REFUSABLE: tuple[str, ...] = ("json_schema", "json_object", "tools")
"""Request shapes the server can be told to refuse (`--refuse`), as a model without them does."""
RETRY_HEADERS: dict[str, str] = {"retry-after": "0"}
"""The headers of an `http_429` answer unless the server is given others (`--retry-headers`, e.g.
OpenAI's `x-ratelimit-remaining-requests` / `x-ratelimit-reset-requests`: see agents/retry_after.py)."""


def listed_names(spec: str | Iterable[str]) -> list[str]:
    """`"a,b"` (or an iterable of names) -> the names, stripped, empty ones dropped."""
    return [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]


def checked_names(
    names: list[str], allowed: Iterable[str], what: str, choices: Iterable[str]
) -> tuple[str, ...]:
    """`names` without repeats, in order; ValueError naming the ones not `allowed` (`what`: e.g.
    "fault kind(s)") and the `choices` to pick from."""
    allowed = tuple(allowed)
    unknown = [n for n in names if n not in allowed]
    if unknown:
        raise ValueError(f"unknown {what}: {', '.join(unknown)}; choose from {', '.join(choices)}")
    return tuple(dict.fromkeys(names))


def parse_fault_kinds(spec: str | Iterable[str]) -> tuple[str, ...]:
    """`"all"` or a comma-separated list (or an iterable) of names -> the enabled fault kinds.

    Raises ValueError naming the unknown kinds.
    """
    names = listed_names(spec)
    if names == ["all"]:
        return tuple(k for k in FAULT_KINDS if k not in OPT_IN_FAULTS)
    return checked_names(names, FAULT_KINDS, "fault kind(s)", ("all", *FAULT_KINDS))


def parse_refused(spec: str | Iterable[str]) -> tuple[str, ...]:
    """`"json_schema,tools"` (or an iterable) -> the refused shapes; ValueError naming unknown ones."""
    return checked_names(listed_names(spec), REFUSABLE, "shape(s) to refuse", REFUSABLE)


def parse_retry_headers(spec: str | dict[str, str] | None) -> dict[str, str]:
    """A JSON object of header names to string values (or such a dict; empty/None: `RETRY_HEADERS`);
    ValueError saying what is wrong."""
    if not spec:
        return dict(RETRY_HEADERS)
    try:
        headers = json.loads(spec) if isinstance(spec, str) else spec
    except ValueError as exc:
        raise ValueError(f"--retry-headers is not JSON: {exc}") from None
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError('--retry-headers must be a JSON object of strings, e.g. {"retry-after": "2"}')
    return {str(name): value for name, value in headers.items()}


def error_body(message: str, kind: str, code: str | None = None, param: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error payload (`param`: the request field it is about, if any)."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def refusal(body: dict[str, Any], refused: tuple[str, ...]) -> dict[str, Any] | None:
    """The HTTP 400 body a model without the request's shape answers (None: the shape is served).
    Worded as OpenAI words it for gpt-3.5-turbo-0125 and `json_schema`."""
    shape = (body.get("response_format") or {}).get("type")
    if shape in refused and shape in ("json_schema", "json_object"):
        message = f"Invalid parameter: 'response_format' of type '{shape}' is not supported with this model."
        return error_body(message, "invalid_request_error", param="response_format")
    if "tools" in refused and body.get("tools"):
        message = "Invalid parameter: 'tools' is not supported with this model."
        return error_body(message, "invalid_request_error", param="tools")
    return None
