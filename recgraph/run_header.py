"""The `recgraph bench` header (dataset, candidates, planned requests), never broken mid-sentence.

On a terminal a paragraph longer than the console is broken between its sentences; a sentence
longer than a line is broken between words, never beside a `→` ("943 → classic keeps" stays
together), its continuation indented by two spaces. Anywhere else (a log file, CI, a pipe) lines
are written whole: a reader's pager or editor wraps them, and a log line is not cut in two.

`dataset_notes` adds the lines some methods have about the dataset itself, once per run (e.g. the
MemRec curation rules that read a field the dataset lacks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.text import Text

if TYPE_CHECKING:
    from world.environment import Environment

SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")
"""Where one sentence ends and the next begins."""
WORD_BREAK = re.compile(r"(?<!→)\s+(?!→)")
"""A space a line may break at: between words, but not next to an arrow."""
CONTINUATION = "  "
"""Indent of a paragraph's continuation lines."""
DATASET_NOTES = (
    "world.filters:filter_notes",
    "agents.memrec.rule_fields:curation_notes",
    "graphs.chainrec.learned:heuristic_training_notes",
)
"""Hooks "module:function", each `(env, {method: its context}) -> lines`: what the run's dataset
cannot feed the selected methods, said once in the header (empty list: nothing to say)."""


def pieces(text: str, pattern: re.Pattern[str]) -> list[tuple[int, int]]:
    """The (start, end) spans of `text` between matches of `pattern`."""
    spans, start = [], 0
    for match in pattern.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def pack(spans: list[tuple[int, int]], width: int) -> list[tuple[int, int]]:
    """Consecutive spans joined while the joined span fits `width` characters (a span wider than
    `width` alone stays alone)."""
    lines: list[tuple[int, int]] = []
    for start, end in spans:
        if lines and end - lines[-1][0] <= width:
            lines[-1] = (lines[-1][0], end)
        else:
            lines.append((start, end))
    return lines


def line_spans(line: str, width: int) -> list[tuple[int, int]]:
    """Where to break one line of the header to fit `width` (see the module docstring): spans of
    `line`, each to be printed on a line of its own (continuations with `CONTINUATION` before)."""
    if len(line) <= width:
        return [(0, len(line))]
    inner = max(1, width - len(CONTINUATION))
    spans = []
    for start, end in pack(pieces(line, SENTENCE_BREAK), inner):
        if end - start <= inner:
            spans.append((start, end))
            continue
        words = [(start + a, start + b) for a, b in pieces(line[start:end], WORD_BREAK)]
        words[0] = (start, words[0][1])  # a leading indent stays
        spans.extend(pack(words, inner))
    return spans


def print_header(console: Console, markup: str) -> None:
    """Print one header paragraph (rich markup, may hold several lines) on `console`, broken as the
    module docstring says."""
    text = console.render_str(markup)
    if not console.is_terminal:
        console.print(text, soft_wrap=True)
        return
    for line in text.split("\n"):
        for number, (start, end) in enumerate(line_spans(line.plain, console.width)):
            piece = line[start:end]
            console.print(Text(CONTINUATION) + piece if number else piece, soft_wrap=True)


def dataset_notes(env: Environment, contexts: Mapping[str, Any]) -> list[str]:
    """Every `DATASET_NOTES` hook's lines for this run (`contexts`: each selected method's context)."""
    from graphs.registry import resolve

    return [line for hook in DATASET_NOTES for line in resolve(hook)(env, contexts)]
