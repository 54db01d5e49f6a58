"""A CoT trace as the miner reads it, and the loader of a traces file (JSONL, one trace a line).

A line is a JSON object with `steps` (a list of `{"label": ..., "text": ...}`, `text` optional),
`ranking` (item ids, best first) and `target` (the held-out training item); optional `user_id`,
`candidates`, `source` ("llm" or "fallback"; default "llm") and `domain`. Generated traces carry
more (protocol, missing fields, usage); the loader ignores what it does not use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from world.errors import DataFormatError


@dataclass(frozen=True)
class Step:
    """One labelled reasoning step."""

    label: str
    """The step's label as the model wrote it."""
    text: str = ""
    """What the step says (may be empty)."""


@dataclass(frozen=True)
class Trace:
    """One task's step-labelled chain of thought and its final ranking."""

    user_id: str
    """The task's user (or the line number when the file names none)."""
    target: str
    """The training task's held-out item (the user's validation interaction)."""
    ranking: tuple[str, ...]
    """The model's final ranking, best first."""
    steps: tuple[Step, ...]
    """The reasoning steps, in order."""
    source: str = "llm"
    """"llm" (the model answered) or "fallback" (no usable answer: not a trace to mine)."""


def _problem(path: Path, number: int, what: str) -> DataFormatError:
    return DataFormatError(path, number, what)


def _step(path: Path, number: int, index: int, raw: Any) -> Step:
    if not isinstance(raw, dict) or not isinstance(raw.get("label"), str):
        raise _problem(path, number, f"steps[{index}] must be an object with a string 'label'")
    text = raw.get("text", "")
    if not isinstance(text, str):
        raise _problem(path, number, f"steps[{index}].text must be a string")
    return Step(raw["label"], text)


def parse_trace(path: Path, number: int, line: str) -> Trace:
    """One line of a traces file as a `Trace`; `DataFormatError` naming the file, line and problem."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        raise _problem(path, number, f"not valid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise _problem(path, number, "a trace must be a JSON object")
    for key, kind in (("steps", list), ("ranking", list), ("target", (str, int))):
        if key not in record:
            raise _problem(path, number, f"missing '{key}'")
        if not isinstance(record[key], kind):
            raise _problem(path, number, f"'{key}' has the wrong type ({type(record[key]).__name__})")
    ranking = tuple(str(item) for item in record["ranking"])
    candidates = record.get("candidates")
    if candidates is not None:
        unknown = sorted(set(ranking) - {str(c) for c in candidates})
        if unknown:
            raise _problem(
                path, number, f"ranking names ids that are not candidates: {', '.join(unknown[:3])}"
            )
    steps = tuple(_step(path, number, i, raw) for i, raw in enumerate(record["steps"]))
    source = record.get("source", "llm")
    if source not in ("llm", "fallback"):
        raise _problem(path, number, f"'source' must be 'llm' or 'fallback', got {source!r}")
    return Trace(str(record.get("user_id", number)), str(record["target"]), ranking, steps, source)


def load_traces(path: Path) -> list[Trace]:
    """Every trace of a JSONL file (blank lines skipped); a missing file or a malformed line is a
    `DataFormatError` naming the file (and line)."""
    if not path.is_file():
        raise DataFormatError(path, None, "traces file does not exist")
    lines = path.read_text(encoding="utf-8").splitlines()
    traces = [parse_trace(path, n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    if not traces:
        raise DataFormatError(path, None, "the traces file holds no traces")
    return traces
