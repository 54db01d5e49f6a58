"""Bounded inputs: what one served request may carry, checked before its run is created.

The server refuses a request past any of these with 422 naming the field (graphs/auth/server.py),
so an oversize request never reaches a graph: no dataset, memory or pool is read or written for
it. Each limit is a knob read from the environment when the server starts (`Limits.from_env`):

| variable | default | what it caps |
|---|---|---|
| `RECGRAPH_MAX_CANDIDATES` | 500 | `candidates`: item ids to rank |
| `RECGRAPH_MAX_HISTORY` | 500 | `history`: items of a history a request carries |
| `RECGRAPH_MAX_ID_CHARS` | 128 | `user_id`, `item_id`, each candidate id |
| `RECGRAPH_MAX_TEXT_CHARS` | 2000 | `instruction` and any other interaction text a caller writes |
| `RECGRAPH_MAX_BATCH` | 5000 | any other list (`jobs`, `plans`, `windows`: a service request's batch) |
| `RECGRAPH_MAX_MEMORY_CHARS` | 20000 | any other string anywhere in the input (a job's memory text) |
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

from world.errors import RecgraphError

ID_FIELDS = ("user_id", "item_id")
"""Input fields holding one id."""
TEXT_FIELDS = ("instruction", "text", "review", "interaction")
"""Input fields holding a caller's free text (an interaction's text)."""
LIST_LIMITS = {"candidates": "max_candidates", "history": "max_history"}
"""List fields with a cap of their own (the `Limits` field); any other list is a batch (`max_batch`)."""
MAX_DEPTH = 12
"""Deepest nesting of lists and objects an input may have."""


class InputTooLarge(RecgraphError):
    """A request past a limit (422); the message names the field and the limit."""


@dataclass(frozen=True)
class Limits:
    """The caps of one served request (module docstring: variables and defaults)."""

    max_candidates: int = 500
    """Most candidate ids per request."""
    max_history: int = 500
    """Most items of a history carried in a request."""
    max_id_chars: int = 128
    """Longest user or item id."""
    max_text_chars: int = 2000
    """Longest instruction or interaction text."""
    max_batch: int = 5000
    """Most jobs, plans or windows per service request."""
    max_memory_chars: int = 20000
    """Longest other string (e.g. a memory text inside a job)."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The limits `RECGRAPH_MAX_*` set (positive integers; one line naming a bad one)."""
        env = os.environ if environ is None else environ
        values: dict[str, int] = {}
        for spec in fields(cls):
            variable = knob_name(spec.name)
            if variable in env:
                try:
                    values[spec.name] = int(env[variable])
                except ValueError:
                    values[spec.name] = 0
                if values[spec.name] <= 0:
                    raise RecgraphError(f"{variable}={env[variable]!r} is not a positive integer")
        return cls(**values)

    def check(self, payload: Any) -> None:
        """Refuse `payload` (a run's input) past a limit: `InputTooLarge` naming the first field."""
        if payload is None:
            return
        if not isinstance(payload, dict):
            raise InputTooLarge(f"input: expected an object, got {type(payload).__name__}")
        for where, value, depth in walk(payload, "input", 0):
            problem = self._problem(where, value, depth)
            if problem:
                raise InputTooLarge(f"{where}: {problem}")

    def _problem(self, where: str, value: Any, depth: int) -> str:
        name = where.rsplit(".", 1)[-1].split("[", 1)[0]
        top = where.count(".") == 1 and "[" not in where
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(value, list):
            limit = LIST_LIMITS.get(name, "max_batch")
            cap = getattr(self, limit)
            return f"{len(value)} items, more than {knob_name(limit)}={cap}" if len(value) > cap else ""
        if not isinstance(value, str):
            return ""
        if (top and name in ID_FIELDS) or where.startswith("input.candidates["):
            limit = "max_id_chars"
        elif top and name in TEXT_FIELDS:
            limit = "max_text_chars"
        else:
            limit = "max_memory_chars"
        cap = getattr(self, limit)
        return f"{len(value)} characters, more than {knob_name(limit)}={cap}" if len(value) > cap else ""


def knob_name(limit: str) -> str:
    """The environment variable setting `Limits` field `limit` (`max_batch` -> `RECGRAPH_MAX_BATCH`)."""
    return f"RECGRAPH_{limit.upper()}"


def walk(value: Any, where: str, depth: int) -> Iterator[tuple[str, Any, int]]:
    """Every value under `value` with its path (`input.jobs[3].text`) and depth, parents first."""
    yield where, value, depth
    if depth > MAX_DEPTH:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from walk(inner, f"{where}.{key}", depth + 1)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from walk(inner, f"{where}[{index}]", depth + 1)
