"""Streaming the lines of a text file, gzip or not, with line numbers and one-line errors.

The public dumps are large (an Amazon category is gigabytes of JSON lines, often gzipped): loaders
read them one line at a time, so memory follows what they keep, not the file size. A truncated or
corrupt gzip stream becomes a `DataFormatError` naming the file and the last line read.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from world.errors import DataFormatError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path: Path) -> bool:
    """Whether `path` starts with the gzip magic bytes (whatever its suffix)."""
    with path.open("rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Yield `(line_number, line)` for every non-blank line of `path` (gzip read transparently;
    trailing newline stripped; undecodable bytes replaced)."""
    if not path.is_file():
        raise DataFormatError(path, None, "file not found")
    gzipped = is_gzip(path)
    number = 0
    try:
        with (
            gzip.open(path, "rt", encoding="utf-8", errors="replace")
            if gzipped
            else path.open(encoding="utf-8", errors="replace")
        ) as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    yield number, line.rstrip("\r\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        problem = "truncated gzip stream" if isinstance(exc, EOFError) else f"corrupt gzip stream ({exc})"
        raise DataFormatError(path, number + 1, f"{problem}: the file ends or breaks here") from None
