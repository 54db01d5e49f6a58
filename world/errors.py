"""Error types the CLI turns into one-line messages (never a traceback)."""

from __future__ import annotations

from pathlib import Path


class RecgraphError(ValueError):
    """Base class of every error that is the user's input, not a bug.

    A `ValueError` (a value the user gave cannot work), which is also what LangGraph's server
    passes through with its message: Studio shows our message, not "An internal error occurred"."""


class DataFormatError(RecgraphError):
    """A data file is malformed; the message names the file, the line and the problem."""

    def __init__(self, path: str | Path, line: int | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = problem
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {problem}")


class DatasetNotFoundError(RecgraphError):
    """A dataset name or path that names nothing we can load."""


class ProtocolError(RecgraphError):
    """Protocol options that cannot work together (e.g. `--candidates 1`)."""


class InvalidRecInput(RecgraphError):
    """A request that names something the dataset does not have (an unknown user or item id,
    empty or duplicate candidates)."""
