"""Reading AgentSociety's JSON files: JSON lines (or one JSON array) and single-object task files,
every problem a `DataFormatError` naming the file and the line.

Both layouts are streamed, gzip or not (told by the magic bytes, whatever the name): a JSON-lines
file one line at a time, a JSON array one element at a time from a buffer refilled as it is decoded
(a one-line array in pieces), so memory follows the largest record, not the file. A truncated or
corrupt gzip stream is an error naming the last line read.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from world.errors import DataFormatError
from world.loaders.lines import is_gzip

_SEPARATORS = re.compile(r"[\s,]*")
PIECE_CHARS = 1 << 16
"""Longest piece of a line read at once (a one-line JSON array is read in such pieces)."""
ELEMENT_CHARS = 1 << 24
"""Longest text an array element that does not parse is read to before it is called malformed."""


def _open(path: Path) -> IO[str]:
    if is_gzip(path):
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="replace")
    return path.open(encoding="utf-8-sig", errors="replace")


def _pieces(path: Path) -> Iterator[str]:
    """The text of `path` as lines, a line longer than `PIECE_CHARS` in several pieces (only the last
    ends with a newline); a gzip error names the line it breaks."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    ended = 0
    try:
        with _open(path) as handle:
            for piece in iter(lambda: handle.readline(PIECE_CHARS), ""):
                yield piece
                ended += piece.endswith("\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        problem = "truncated gzip stream" if isinstance(exc, EOFError) else f"corrupt gzip stream ({exc})"
        raise DataFormatError(path, ended + 1, f"{problem}: the file ends or breaks here") from None


def read_json_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield `(line, object)` for every record of a JSON-lines file or of one JSON array."""
    pieces = _pieces(path)
    number, started = 0, False
    for piece in pieces:
        number += 1
        if not started and piece.lstrip().startswith("["):
            yield from _array_records(path, _ArrayText(pieces, piece, number))
            return
        line = piece
        while not line.endswith("\n") and (more := next(pieces, "")):
            line += more
        text = line.strip()
        if not text:
            continue
        started = True
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DataFormatError(path, number, f"not valid JSON: {exc.msg}") from None
        yield number, as_object(path, number, value)


class _ArrayText:
    """A JSON array's text, read piece by piece as its elements are decoded: the text decoded so far
    is dropped at each refill, so the buffer holds about one element (or one refill)."""

    def __init__(self, pieces: Iterator[str], first: str, number: int) -> None:
        """Start after the `[` of `first`, which begins line `number` of the file."""
        self.pieces = pieces
        self.text = first
        self.pos = first.index("[") + 1
        self._line, self._counted = number, 0

    def line_at(self, pos: int) -> int:
        """The file line of `text[pos]` (`pos` never before a position asked earlier)."""
        self._line += self.text.count("\n", self._counted, pos)
        self._counted = pos
        return self._line

    def refill(self) -> bool:
        """Drop the text before `pos` and add pieces (at least `PIECE_CHARS`); False at the end."""
        self.line_at(self.pos)
        parts, size = [self.text[self.pos :]], 0
        for piece in self.pieces:
            parts.append(piece)
            size += len(piece)
            if size >= PIECE_CHARS:
                break
        self.text, self.pos, self._counted = "".join(parts), 0, 0
        return size > 0

    def cut_short(self, error: json.JSONDecodeError) -> bool:
        """Whether `error` may only mean the element goes on past the buffer: whole lines fail at
        their end (a JSON string never spans lines); a buffer ending mid-line may fail anywhere in
        its last element, which is given up to `ELEMENT_CHARS`."""
        if not self.text.endswith("\n"):
            return len(self.text) - error.pos <= ELEMENT_CHARS
        return not self.text[error.pos :].strip()

    def rest_is_blank(self) -> bool:
        """Whether nothing but whitespace follows the character at `pos`."""
        return not self.text[self.pos + 1 :].strip() and not any(piece.strip() for piece in self.pieces)


def _array_records(path: Path, array: _ArrayText) -> Iterator[tuple[int, dict[str, Any]]]:
    """The elements of the JSON array being read by `array`, with their lines."""
    decoder = json.JSONDecoder()
    while True:
        array.pos = _SEPARATORS.match(array.text, array.pos).end()
        if array.pos == len(array.text):
            if array.refill():
                continue
            raise DataFormatError(path, array.line_at(array.pos), "not valid JSON: the array is not closed")
        if array.text.startswith("]", array.pos):
            line = array.line_at(array.pos)
            if not array.rest_is_blank():
                raise DataFormatError(path, line, "not valid JSON: extra data after the array")
            return
        try:
            value, end = decoder.raw_decode(array.text, array.pos)
        except json.JSONDecodeError as exc:
            if array.cut_short(exc) and array.refill():
                continue
            raise DataFormatError(path, array.line_at(exc.pos), f"not valid JSON: {exc.msg}") from None
        line = array.line_at(array.pos)
        array.pos = end
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
