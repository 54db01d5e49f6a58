"""Reading AgentSociety's JSON files: JSON lines (or one JSON array) and single-object task files,
every problem a `DataFormatError` naming the file and the line."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from world.errors import DataFormatError

_SEPARATORS = re.compile(r"[\s,]*")


def read_json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line, object)` for every record of a JSON-lines file or of one JSON array."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    with path.open(encoding="utf-8-sig", errors="replace") as handle:
        started = False
        for number, line in enumerate(handle, start=1):
            text = line.strip()
            if not text:
                continue
            if text.startswith("[") and not started:
                yield from _array_records(path, line + handle.read(), number)
                return
            started = True
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DataFormatError(path, number, f"not valid JSON: {exc.msg}") from None
            yield number, as_object(path, number, value)


def _array_records(path: Path, text: str, first_line: int) -> Iterator[tuple[int, dict]]:
    """The elements of the JSON array in `text` (starting on `first_line`), with their lines."""
    decoder, pos, line, counted = json.JSONDecoder(), text.index("[") + 1, first_line, 0
    while True:
        pos = _SEPARATORS.match(text, pos).end()
        line, counted = line + text.count("\n", counted, pos), pos
        if text.startswith("]", pos):
            if text[pos + 1 :].strip():
                raise DataFormatError(path, line, "not valid JSON: extra data after the array")
            return
        try:
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            bad = line + text.count("\n", counted, exc.pos)
            raise DataFormatError(path, bad, f"not valid JSON: {exc.msg}") from None
        yield line, as_object(path, line, value)


def as_object(path: Path, line: int, value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else the error naming `path` and `line`."""
    if not isinstance(value, dict):
        raise DataFormatError(path, line, f"expected a JSON object, found {type(value).__name__}")
    return value


def required_id(path: Path, line: int, record: dict[str, Any], field: str) -> str:
    """A required id field as a string token."""
    value = record.get(field)
    if value is None or value == "":
        raise DataFormatError(path, line, f"missing field {field!r}")
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise DataFormatError(path, line, f"field {field!r} must be a string or an integer")
    return str(value)


def read_object(path: Path) -> tuple[dict[str, Any], str]:
    """One JSON object file and its text."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    text = path.read_text(encoding="utf-8-sig", errors="replace")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataFormatError(path, exc.lineno, f"not valid JSON: {exc.msg}") from None
    return as_object(path, 1, value), text


def line_of(text: str, field: str) -> int:
    """The line where `"field"` first appears in `text` (1 when absent)."""
    return 1 + text.count("\n", 0, max(text.find(json.dumps(field)), 0))
