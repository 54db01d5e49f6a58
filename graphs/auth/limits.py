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
            variable = f"RECGRAPH_{spec.name.upper()}"
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
            caps = {"candidates": self.max_candidates, "history": self.max_history}
            cap = caps.get(name, self.max_batch)
            if len(value) > cap:
                return f"{len(value)} items, more than {limit_name(name)}={cap}"
            return ""
        if not isinstance(value, str):
            return ""
        if (top and name in ID_FIELDS) or where.startswith("input.candidates["):
            cap, knob = self.max_id_chars, "RECGRAPH_MAX_ID_CHARS"
        elif top and name in TEXT_FIELDS:
            cap, knob = self.max_text_chars, "RECGRAPH_MAX_TEXT_CHARS"
        else:
            cap, knob = self.max_memory_chars, "RECGRAPH_MAX_MEMORY_CHARS"
        return f"{len(value)} characters, more than {knob}={cap}" if len(value) > cap else ""


def limit_name(field_name: str) -> str:
    """The knob capping list field `field_name` (any list but candidates and history: the batch)."""
    if field_name in ("candidates", "history"):
        return f"RECGRAPH_MAX_{field_name.upper()}"
    return "RECGRAPH_MAX_BATCH"


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
