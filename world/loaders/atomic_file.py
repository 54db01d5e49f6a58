"""Reading RecBole atomic files: a typed header line, then tab-separated rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from world.errors import DataFormatError

FIELD_TYPES = {"token", "token_seq", "float", "float_seq"}


def read_atomic(path: Path, required: tuple[str, ...] = ()) -> Iterator[tuple[int, dict[str, str]]]:
    """Yield `(line_number, {field_name: raw_value})` for every data row of an atomic file.

    The header must look like `user_id:token<TAB>item_id:token...`. Raises
    `DataFormatError` naming the file and line for a bad header, a missing required
    field, or a row with the wrong number of columns.
    """
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    with path.open(encoding="utf-8", errors="replace") as handle:
        header = handle.readline().rstrip("\r\n")
        if not header:
            raise DataFormatError(path, 1, "empty file: expected a typed header line")
        names = []
        for column in header.split("\t"):
            name, _, kind = column.partition(":")
            if not name or kind not in FIELD_TYPES:
                raise DataFormatError(
                    path, 1, f"bad header column {column!r}: expected name:token|token_seq|float"
                )
            names.append(name)
        missing = [r for r in required if r not in names]
        if missing:
            raise DataFormatError(path, 1, f"header lacks required field(s) {', '.join(missing)}")
        for number, line in enumerate(handle, start=2):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            values = line.split("\t")
            if len(values) != len(names):
                raise DataFormatError(
                    path, number, f"expected {len(names)} tab-separated fields, found {len(values)}"
                )
            yield number, dict(zip(names, values, strict=True))


def parse_float(path: Path, line: int, field: str, raw: str) -> float:
    """Parse a float field or raise `DataFormatError` naming it."""
    try:
        return float(raw)
    except ValueError:
        raise DataFormatError(path, line, f"field {field!r} is not a number: {raw!r}") from None
