"""AgentCF's prompts (Zhang et al., WWW 2024) in our own words: the paper's structure (the user agent
picks one of two items from its self-description; on the real outcome the user agent rewrites its
self-description and the item agents rewrite their descriptions; the user agent ranks candidates
from its memory and theirs), the project's rules and answer formats. Every memory is quoted data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE, quote

USER_SYSTEM = (
    "You act as one user of a recommender system. Your memory is a self-description of the item "
    "features you like and dislike, written by you after earlier choices. " + DATA_RULE +
    " Reply with a JSON object only."
)
ITEM_SYSTEM = (
    "You keep the descriptions of items in a recommender system. Each description is the item's "
    "memory: what it is and which users it suits, learnt from users' real choices; the agents of "
    "other users read it when they choose. " + DATA_RULE + " Reply with a JSON object only."
)


def memory_lines(memories: Mapping[str, str], ids: Sequence[str], max_chars: int) -> str:
    """One line per item: `[id] "its agent's memory"` (the memory starts with the title)."""
    return "\n".join(f"[{item}] {quote(memories[item], max_chars)}" for item in ids)


CHOICE = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "Your self-description: {user_memory}\n\n"
            "You are offered two items, each with the description its item agent keeps:\n{items}\n\n"
            "Pick the one you would choose. Work out what you like and dislike from your "
            "self-description, compare both items with it, and decide. When your self-description "
            "says nothing that settles it, fall back on general knowledge such as how well known an "
            "item is; never invent tastes it does not state.\n"
            "Rules:\n- 'choice' is the id in square brackets of the one item you pick.\n"
            "- 'explanation' names the features of both items that decided it (at most three "
            "sentences).",
        ),
    ]
)
"""The user agent's choice between the real item and a sampled one (the paper's forward step)."""

_USER_RULES = (
    "Rules:\n- At most {words} words.\n"
    "- Write only item features you like or dislike: no overall verdict, no mention of this choice "
    "or of how you revised.\n"
    "- Be specific: a taste that would describe almost anyone is not worth keeping."
)

USER_REFLECTION_WRONG = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "Your self-description so far: {user_memory}\n\nYou were offered two items:\n{items}\n\n"
            "You picked [{picked}] and explained: {explanation}\n"
            "In fact you chose [{chosen}] and did not want [{rejected}]. Your pick was wrong, so what "
            "you believed about your tastes was wrong or too vague.\n\n"
            "Revise your self-description:\n1. Find what in your explanation misled you and correct it.\n"
            "2. Infer new preferences from the features of [{chosen}] and new dislikes from those of "
            "[{rejected}].\n3. Keep earlier preferences and dislikes that still hold; drop the ones "
            "that conflict with what you learnt or repeat it.\n4. Write the new preferences first, "
            "then the earlier ones you kept, then your dislikes.\n" + _USER_RULES,
        ),
    ]
)
"""Collaborative reflection, user side, after a wrong choice."""

USER_REFLECTION_RIGHT = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "Your self-description so far: {user_memory}\n\nYou were offered two items:\n{items}\n\n"
            "You picked [{picked}] and explained: {explanation}\n"
            "That was right: you did choose [{chosen}] and did not want [{rejected}].\n\n"
            "Revise your self-description so it holds what this choice confirmed:\n1. Take the "
            "judgements in your explanation that proved right.\n2. Add the preferences the features of "
            "[{chosen}] show and the dislikes those of [{rejected}] show.\n3. Keep earlier preferences "
            "and dislikes that still hold; drop conflicting or repeated ones.\n4. Write the new "
            "preferences first, then the earlier ones you kept, then your dislikes.\n" + _USER_RULES,
        ),
    ]
)
"""Collaborative reflection, user side, after a right choice (the paper reflects on both)."""

_ITEM_RULES = (
    "Rules:\n- At most {words} words per description.\n"
    "- Name users as a group by their tastes ('users who like ...'), never 'the user'.\n"
    "- Never contradict what an item is (its title and categories).\n"
    "- Keep each description to the features that set that item apart."
)

ITEM_REFLECTION_WRONG = ChatPromptTemplate.from_messages(
    [
        ("system", ITEM_SYSTEM),
        (
            "human",
            "A user describes their tastes like this: {user_memory}\n\nThe user was offered two "
            "items, described as follows:\n{items}\n\nThe user's agent picked [{picked}] because: "
            "{explanation}\nIn fact the user chose [{chosen}] and did not want [{rejected}]: the "
            "descriptions misled the pick.\n\n"
            "Rewrite both descriptions:\n1. Find which described features led to the wrong pick and "
            "correct them.\n2. Add features of [{chosen}] that match this user's preferences and go "
            "against their dislikes, and features of [{rejected}] that match their dislikes; make the "
            "two descriptions clearly different and precise (not just a broad genre).\n3. Keep what "
            "the earlier descriptions say, which other users' choices taught, as far as it still "
            "holds; stay concise.\n" + _ITEM_RULES,
        ),
    ]
)
"""Collaborative reflection, item side, after a wrong choice (reads the user's revised memory)."""

ITEM_REFLECTION_RIGHT = ChatPromptTemplate.from_messages(
    [
        ("system", ITEM_SYSTEM),
        (
            "human",
            "A user describes their tastes like this: {user_memory}\n\nThe user was offered two "
            "items, described as follows:\n{items}\n\nThe user chose [{chosen}] and did not want "
            "[{rejected}], as the user's agent expected ({explanation}).\n\n"
            "Rewrite both descriptions with what this choice shows:\n1. Add features of [{chosen}] "
            "that match this user's preferences and go against their dislikes, and features of "
            "[{rejected}] that match their dislikes; make the two descriptions clearly different and "
            "precise (not just a broad genre).\n2. Keep what the earlier descriptions say as far as it "
            "still holds; stay concise.\n" + _ITEM_RULES,
        ),
    ]
)
"""Collaborative reflection, item side, after a right choice."""

_RANK_RULES = (
    "Rules:\n- Put every candidate id in 'ranking' exactly once, the best match first.\n"
    "- Use only the ids shown in square brackets.\n- 'reason' is one short sentence."
)
_RANK_TASK = (
    "Rank the candidates for me: work out my preferences and dislikes from my self-description, "
    "compare every candidate with them, and order the candidates by how well they match."
)

RANK_BASIC = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "My self-description: {user_memory}\n\nCandidates, each with the description its item "
            "agent keeps:\n{candidates}\n\n" + _RANK_TASK + "\n" + _RANK_RULES,
        ),
    ]
)
"""Ranking from the memories alone (the paper's basic variant, B)."""

RANK_SEQUENTIAL = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "My self-description: {user_memory}\n\nWhat I interacted with most recently, oldest "
            "first:\n{history}\n\nCandidates, each with the description its item agent keeps:\n"
            "{candidates}\n\n" + _RANK_TASK + " You may also weigh how the candidates relate to what I "
            "interacted with recently.\n" + _RANK_RULES,
        ),
    ]
)
"""Ranking with the recent interaction history as well (the paper's B+H)."""

RANK_RETRIEVAL = ChatPromptTemplate.from_messages(
    [
        ("system", USER_SYSTEM),
        (
            "human",
            "Earlier versions of my self-description, the ones closest to these candidates:\n{past}\n\n"
            "My current self-description: {user_memory}\n\nCandidates, each with the description its "
            "item agent keeps:\n{candidates}\n\n" + _RANK_TASK + " Go by my current self-description "
            "first; when it does not decide, turn to the earlier ones.\n" + _RANK_RULES,
        ),
    ]
)
"""Ranking with past self-descriptions retrieved for the candidates (the paper's B+R)."""

