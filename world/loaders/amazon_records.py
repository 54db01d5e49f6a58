"""One record per line of the Amazon review dumps: JSON, or a Python dict literal (2014 metadata).

The 2014 metadata files (`meta_<Category>.json.gz`) and some 2018 ones hold one Python dict literal
a line (single quotes, `True`), which the McAuley Lab's own instructions read with `eval`. A line
that is not JSON is read with `ast.literal_eval` (literals only, never code); a line that is
neither is a `DataFormatError` naming file and line.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from world.errors import DataFormatError
from world.loaders.lines import read_lines


def parse_record(path: Path, line: int, text: str) -> dict[str, Any]:
    """The object on one line: JSON first, else a Python dict literal; anything else is an error."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        value = _literal(text)
        if value is None:
            raise DataFormatError(path, line, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(value, dict):
        raise DataFormatError(path, line, f"expected a JSON object, found {type(value).__name__}")
    return value


def _literal(text: str) -> Any:
    """The Python literal `text` holds, or None when it is not one."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def read_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line, object)` for every line of a (possibly gzipped) JSON-lines file."""
    for number, text in read_lines(path):
        yield number, parse_record(path, number, text)


def text_of(value: Any, limit: int) -> str:
    """A string, or a list of strings joined with spaces, cut to `limit` characters at a word
    boundary; anything else gives ""."""
    if isinstance(value, list):
        value = " ".join(str(v).strip() for v in value if isinstance(v, str | int | float))
    if not isinstance(value, str):
        return ""
    value = value.strip()
    if len(value) <= limit:
        return value
    cut = value[:limit]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"
