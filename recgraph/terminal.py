"""Where the commands write to: the shared rich console, the bench's progress bar and plain progress
lines, and one-line warnings on stderr."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:
    from recgraph.progress_log import ProgressLog

# Piped output gets a wide console so the comparison table is not squeezed to 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)


def warn(line: str) -> None:
    """One warning line on stderr (the run goes on)."""
    print(f"recgraph: warning: {line}", file=sys.stderr)


def progress_log() -> ProgressLog | None:
    """Plain progress lines on stdout when it is not a terminal (`nohup`, CI, a log file), else None
    (the live bar shows progress)."""
    from recgraph.progress_log import ProgressLog

    if console.is_terminal:
        return None
    return ProgressLog(lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True))


def progress_bar() -> Progress:
    """A rich progress bar with ETA, one row per method."""
    return Progress(
        TextColumn("{task.description:>14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
