"""Prompts of ARAG's four agents, in our own words after the paper's structure.

Each prompt states the agent's inputs, its rules and the JSON it must return. The NLI
scale (0–10) is the one documented in `state.arag.schemas`. Item text and what earlier agents wrote
(profile, justifications, summary) arrive quoted by `prompts.common.quote`; every system message
carries `DATA_RULE`.
"""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE

JSON_ONLY = DATA_RULE + " Reply with a JSON object only."

USER_UNDERSTANDING = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are the user-understanding agent of a recommender system. From what one user "
            "interacted with you write a short profile that the other agents will rely on. " + JSON_ONLY,
        ),
        (
            "human",
            "Long-term context: the {long_term_count} earlier interactions shown, oldest first "
            "({long_term_total} in all):\n{long_term}\n\n"
            "Current session: the {session_count} most recent interactions, oldest first:\n{session}\n\n"
            "Rules:\n"
            "- 'long_term': two or three sentences on the lasting tastes (genres, themes, eras, "
            "styles) the long-term context shows.\n"
            "- 'session_intent': one or two sentences on what the session suggests the user is "
            "after right now, and how it differs from the long-term tastes, if it does.\n"
            "- Describe tastes; do not recommend specific items.",
        ),
    ]
)
"""UUA: S_user from the long-term context and the current session."""

NLI_SYSTEM = (
    "You are the natural-language-inference agent of a recommender system. For each item you "
    "treat its text (title, categories and, where given, description and reviews) as the premise "
    "and the hypothesis 'this item serves what the user wants now' as the claim to test, and you "
    "say how strongly the premise supports the claim. " + JSON_ONLY
)

NLI_SCALE = (
    "Score scale: 0 = the item's text contradicts what the user wants, 5 = it neither "
    "supports nor contradicts it, 10 = it clearly supports it. Use the whole range."
)

NLI_BATCHED = ChatPromptTemplate.from_messages(
    [
        ("system", NLI_SYSTEM),
        (
            "human",
            "The user's long-term context: the {long_term_count} latest of {long_term_total} earlier "
            "interactions, oldest first:\n{long_term}\nCategory shares over all of them: {categories}\n\n"
            "The user's current session, oldest first:\n{session}\n\n"
            "First infer the user's present intent from the session (with the long-term tastes as "
            "background), then judge every candidate against it.\n\n{candidates}\n\n"
            "Rules:\n"
            "- 'judgments' has one entry per candidate, each id exactly once, ids exactly as "
            "shown in square brackets.\n"
            f"- 'score': {NLI_SCALE}\n"
            "- 'justification': at most twelve words.",
        ),
    ]
)
"""NLI agent, batched: one call judges every recalled item."""

NLI_PER_ITEM = ChatPromptTemplate.from_messages(
    [
        ("system", NLI_SYSTEM),
        (
            "human",
            "The user's long-term context: the {long_term_count} latest of {long_term_total} earlier "
            "interactions, oldest first:\n{long_term}\nCategory shares over all of them: {categories}\n\n"
            "The user's current session, oldest first:\n{session}\n\n"
            "Infer the user's present intent from the session, then judge the one item below "
            "against it.\n\n{candidates}\n\n"
            "Rules:\n"
            "- 'item_id' is the id shown in square brackets.\n"
            f"- 'score': {NLI_SCALE}\n"
            "- 'justification': at most twelve words.",
        ),
    ]
)
"""NLI agent, per item: one call per recalled item (fanned out in parallel)."""

CONTEXT_SUMMARY = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are the context-summary agent of a recommender system. You condense the items "
            "that passed the relevance check into a short context for the ranking agent. " + JSON_ONLY,
        ),
        (
            "human",
            "Profile of the user (use it to decide what matters):\n{user_summary}\n\n"
            "{selection}, with their support scores ({scale}), the reasons given and, where known, "
            "their descriptions and reviews:\n{accepted}\n\n"
            "Rules:\n"
            "- 'summary': three to five sentences on what these items have in common that "
            "matters for this user (genres, themes, eras, style, audience).\n"
            "- Give more weight to items with higher scores.\n"
            "- Summarise; do not rank the items and do not repeat their ids.",
        ),
    ]
)
"""CSA: S_ctx from the accepted items, with S_user as prior and NLI scores as weights."""

ITEM_RANKER = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are the item-ranking agent of a recommender system. Using what the other agents "
            "found out about the user and the candidates, you order the candidates by how likely "
            "the user is to choose each one next. " + JSON_ONLY,
        ),
        (
            "human",
            "What the user-understanding agent found:\n{user_summary}\n\n"
            "What the context-summary agent found about the candidates:\n{context_summary}\n\n"
            "{candidates}\n\n"
            "How to rank:\n"
            "1. Recall the user's past behaviour from the profile above.\n"
            "2. Keep in mind only the parts of it that bear on these candidates.\n"
            "3. Look at each candidate, its description and reviews where given, in the light of the "
            "context summary.\n"
            "4. Order the candidates from most to least likely to be chosen next.\n\n"
            "Rules:\n"
            "- 'ranking' holds every candidate id exactly once, ids exactly as shown in square "
            "brackets.\n"
            "- 'rationales': one entry per candidate, 'reason' at most ten words.\n"
            "- 'explanation': one or two sentences.",
        ),
    ]
)
"""IRA: the final permutation from S_user, S_ctx and the recall set."""
