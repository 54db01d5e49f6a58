"""The prompt that asks a model for a step-labelled chain of thought on one training task (ChainRec's
offline tool construction, paper appendix B), in our own words after the paper's structure: one
user's recent history with a few reviews per item, the candidates with their reviews, and a request
for explicitly labelled steps followed by a full ranking.

Every title, category and review is shown as quoted data through `prompts.common` (`item_line`,
`quote`, `data_block`, the shared candidates header), and the system message carries `DATA_RULE`.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage
from langchain_core.prompts import ChatPromptTemplate

from prompts.common import CANDIDATES_HEADER, DATA_RULE, data_block, quote

REVIEW_CHARS = 200
"""Cap on one review snippet in the prompt."""

TRACE_SYSTEM = (
    "You are an expert recommender who explains its reasoning. For one user you see their recent "
    "history and a set of candidate items, and you work out which candidates they are most likely to "
    "choose next. Think in a few explicit steps. Give every step a short label (two to six words) that "
    "names the kind of reasoning it does, such as what part of the evidence it examines, and one or two "
    "sentences saying what it found. Use at most {budget} steps and never take the same step twice in "
    "a row; the last step should turn the evidence into the order. Then rank every candidate, best "
    "first. " + DATA_RULE + " Reply with a JSON object only."
)

TRACE = ChatPromptTemplate.from_messages(
    [
        ("system", TRACE_SYSTEM),
        (
            "human",
            "{data}\n\nGive 'steps' (each with 'label' and 'text') and 'ranking': every candidate id "
            "(the text in square brackets) exactly once, best first.",
        ),
    ]
)
"""A trace request: {budget} (the step budget) and {data} (history, notes and candidates as one
`<data>` block, candidates last under the shared header)."""


def entry(line: str, reviews: Sequence[str]) -> str:
    """An item line followed by its review snippets, each quoted on its own indented line."""
    return "\n".join([line, *(f"    review: {quote(text, REVIEW_CHARS)}" for text in reviews)])


def trace_messages(
    budget: int, history: Sequence[str], candidates: Sequence[str], notes: Sequence[str]
) -> list[BaseMessage]:
    """The messages of one trace request; `history` and `candidates` are `entry` blocks (newest
    history first), `notes` say what the dataset lacks."""
    parts = [f"Recent history of the user (most recent first, {len(history)} items):"]
    parts += list(history) or ["(no visible interactions)"]
    if notes:
        parts += ["", "Not in this dataset: " + ", ".join(notes) + "."]
    parts += ["", CANDIDATES_HEADER, *candidates]
    return TRACE.format_messages(budget=budget, data=data_block("\n".join(parts)))
