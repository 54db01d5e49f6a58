"""LLMRank's prompts (Hou et al., ECIR 2024) in our own words: the paper's structure (numbered
sequential history, candidate list, ranking instruction; a recency reminder; an in-context
demonstration from the user's own record), the project's rules and answer format."""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE

SYSTEM = (
    "You rank candidate items for one user of a recommender system. The user's past interactions "
    "are numbered in the order they happened: a higher number is more recent. "
    + DATA_RULE
    + " Reply with a JSON object only."
)

RULES = (
    "Rank every candidate by how likely the user is to pick it next, most likely first.\n"
    "Rules:\n"
    "- 'ranking' holds every candidate id exactly once; use only ids shown in square brackets in the "
    "candidate list, never an item that is not a candidate.\n"
    "- 'reason' is one short sentence."
)

SEQUENTIAL = ChatPromptTemplate.from_messages(
    [
        ("system", SYSTEM),
        (
            "human",
            "In this order, the user interacted with:\n{history}\n\n"
            "These are the candidates the user could pick next:\n{candidates}\n\n" + RULES,
        ),
    ]
)
"""Sequential prompting: the numbered history, then the candidates."""

RECENCY = ChatPromptTemplate.from_messages(
    [
        ("system", SYSTEM),
        (
            "human",
            "In this order, the user interacted with:\n{history}\n\n"
            "Keep in mind that the user's most recent interaction, the last one above, was:\n{latest}\n"
            "It says the most about what the user wants now.\n\n"
            "These are the candidates the user could pick next:\n{candidates}\n\n" + RULES,
        ),
    ]
)
"""Recency-focused prompting: the sequential prompt plus a reminder of the latest interaction."""

ICL = ChatPromptTemplate.from_messages(
    [
        ("system", SYSTEM),
        (
            "human",
            "A worked example from this same user's record. After these interactions, in this order:\n"
            "{demo_history}\n"
            "the right recommendation was the item the user then picked:\n{demo_answer}\n\n"
            "The user has now picked it, so their whole record, in order, is:\n{history}\n\n"
            "Reason the same way about what comes next. These are the candidates the user could pick "
            "next:\n{candidates}\n\n" + RULES,
        ),
    ]
)
"""In-context learning: a demonstration (the history but its last item -> that item), then the task."""
