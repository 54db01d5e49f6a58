"""Prompts of the LLM baselines (LLMRank-style zero-shot ranking), in our own words."""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE

RANKER_SYSTEM = (
    "You are the ranking component of a recommender system. You see what one user "
    "interacted with and a list of candidate items, and you order the candidates by how "
    "likely the user is to pick each one next. " + DATA_RULE + " Reply with a JSON object only."
)

RANKING_RULES = (
    "Rules:\n"
    "- Put every candidate id in 'ranking' exactly once, most likely first.\n"
    "- Use only the ids shown in square brackets in the candidate list.\n"
    "- 'reason' is one short sentence."
)

VANILLA_LLM = ChatPromptTemplate.from_messages(
    [
        ("system", RANKER_SYSTEM),
        (
            "human",
            "The user's interaction history, oldest first:\n{history}\n\n{candidates}\n\n"
            + RANKING_RULES,
        ),
    ]
)
"""Zero-shot ranking from the raw (most recent part of the) history."""

RECENCY_LLM = ChatPromptTemplate.from_messages(
    [
        ("system", RANKER_SYSTEM),
        (
            "human",
            "The user's {count} most recent interactions, oldest first:\n{history}\n\n"
            "Judge the candidates by how well they continue this recent activity.\n\n"
            "{candidates}\n\n" + RANKING_RULES,
        ),
    ]
)
"""ARAG's recency baseline: only the latest interactions."""

VANILLA_RAG = ChatPromptTemplate.from_messages(
    [
        ("system", RANKER_SYSTEM),
        (
            "human",
            "Items from the user's history that are most relevant to the user's current context "
            "(retrieved by embedding similarity), oldest first:\n{history}\n\n{candidates}\n\n"
            + RANKING_RULES,
        ),
    ]
)
"""Vanilla RAG: retrieved history items go into the prompt; no agents."""
