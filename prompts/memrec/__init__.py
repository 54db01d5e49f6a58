"""Prompts of MemRec's two LLM stages, in our own words after the paper's structure.

Stage R (LM_Mem, role "mem") distils the user's memory and the curated neighbours into preference
facets; Stage ReRank (LLM_Rec, role "rec") scores each candidate against those facets; Stage W
(LM_Mem) writes one interaction into the user's and the item's memories and rewrites the memories
of the curated neighbours it concerns, from the Stage R facets. Candidate
lists come last in the user message, under the shared "Candidates" header. Memories, facets, notes,
titles and the user's request are quoted with `prompts.common.quote`; every system message carries
`DATA_RULE`.
"""

from __future__ import annotations

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE

SYNTHESIS_SYSTEM = (
    "You manage the memory of a recommender system. From one user's own memory and short notes "
    "on related users and items (their collaborative neighbours) you write down what the user "
    "likes, as a few compact preference facets backed by evidence. " + DATA_RULE + " Reply with a "
    "JSON object only."
)

SYNTHESIS = ChatPromptTemplate.from_messages(
    [
        ("system", SYNTHESIS_SYSTEM),
        (
            "human",
            "Target user {user}. Their memory:\n{user_memory}\n\n"
            "Curated neighbours (id, kind and a short note; most relevant first):\n{neighbours}\n\n"
            "Write exactly {n_facets} distinct preference facets for this user. For each give "
            "'facet' (a short phrase), 'confidence' (0 to 1: how well the memory and the neighbours "
            "support it) and 'supporting_neighbors' (ids from the neighbour list only). Also give "
            "'support_edges': links {{from, to, w}} between a neighbour id and {user} (or between "
            "two neighbours) with strength w from 0 to 1. The candidates below are only context, "
            "to keep the facets relevant to the decision at hand; do not rank them.\n\n"
            "{candidates}",
        ),
    ]
)
"""Stage R synthesis: {user}, {user_memory}, {neighbours}, {n_facets}, {candidates}."""

RERANK_SYSTEM = (
    "You are the ranking component of a recommender system. You judge how well each candidate "
    "item fits one user, using the user's request, preference facets distilled from their memory "
    "and their collaborative neighbourhood, and what is known about each item. " + DATA_RULE + " Reply "
    "with a JSON object only."
)

RERANK = ChatPromptTemplate.from_messages(
    [
        ("system", RERANK_SYSTEM),
        (
            "human",
            "User request: {instruction}\n\nUser memory:\n{user_memory}\n\n"
            "Preference facets (confidence in brackets):\n{facets}\n\n"
            "Give every candidate one entry in 'scores' with its 'item_id' (the id in square "
            "brackets), a 'score' from 0 (poor fit) to 1 (excellent fit) and a one-sentence "
            "'rationale' that cites the facets or the request. Use different scores for items "
            "that fit differently.\n\n{candidates}",
        ),
    ]
)
"""Stage ReRank: {instruction}, {user_memory}, {facets}, {candidates} (candidate memories)."""

NO_INSTRUCTION = "(none given; infer it from the memory and the facets)"
"""What the request line says when the dataset has no instruction for the user."""

WRITE_SYSTEM = (
    "You maintain the long-term memory of a recommender system. When a user interacts with an "
    "item you update, in one pass, what the system remembers about the user, about the item and "
    "about the related users and items the interaction says something about, so later "
    "recommendations can use it. Every memory stays short, factual and about tastes, not about this "
    "one event only. " + DATA_RULE + " Reply with a JSON object only."
)

WRITE = ChatPromptTemplate.from_messages(
    [
        ("system", WRITE_SYSTEM),
        (
            "human",
            "User {user} just interacted with (chose) item {item}.\n\n"
            "Preference facets of {user}, distilled from their memory and their collaborative "
            "neighbourhood (confidence in brackets):\n{facets}\n\n"
            "Current memory of {user}:\n{user_memory}\n\n"
            "Current memory of {item}:\n{item_memory}\n\n"
            "The {n_neighbours} curated collaborative neighbours of this interaction (id, kind and "
            "current memory; most relevant first):\n{neighbours}\n\n"
            "Return three fields.\n"
            "'user_memory': the user's memory brought up to date, combining what the current memory "
            "says, the facets and what choosing {item} adds. Keep what still holds, describe themes "
            "and tastes rather than listing titles, a few sentences, at most {memory_chars} "
            "characters.\n"
            "'item_memory': the item's memory brought up to date: what it is and what kind of user "
            "enjoys it, at most {memory_chars} characters.\n"
            "'neighbor_updates': propagate the interaction to the neighbours it is relevant to "
            "(shared themes, related tastes); choose as many as it warrants, at most {fanout}, and "
            "leave out the rest. For each give 'neighbor_id' (an id from the list), 'memory_update' "
            "(that neighbour's complete new memory: its current memory revised with the insight, "
            "not a sentence to append; at most {memory_chars} characters) and 'rationale' (why it "
            "is relevant, at most {update_chars} characters).",
        ),
    ]
)
"""Stage W (Eq. 5-6, Fig. 15): {user}, {item}, {facets} (M_collab), {user_memory}, {item_memory},
{n_neighbours}, {neighbours} (N'_k with memories), {memory_chars}, {fanout}, {update_chars}."""

INIT = ChatPromptTemplate.from_messages(
    [
        ("system", WRITE_SYSTEM),
        (
            "human",
            "Write the first memory the system keeps about user {user}, from their past interactions "
            "(oldest first):\n{history}\n\nTheir most frequent categories: {categories}.\n\n"
            "Return 'memory': at most {memory_chars} characters describing what they like and avoid "
            "(genres, eras, themes, how their taste moved recently). Name a few titles as evidence.",
        ),
    ]
)
"""Optional initialisation pass: {user}, {history}, {categories}, {memory_chars}."""
