"""Prompts of AMEM4Rec's four agents, in our own words after the paper's structure (Appendix A):
pattern extraction, collaborative linking, memory evolution and memory-augmented ranking. The
answers use the paper's field names. Titles, categories and memory texts are quoted data: the
system messages carry `prompts.common.DATA_RULE`, and every text goes through `prompts.common.quote`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.prompts import ChatPromptTemplate

from prompts.common import DATA_RULE, item_block, quote
from world.data import Dataset

DATA_NOT_INSTRUCTIONS = DATA_RULE + " Reply with a JSON object only."

EXTRACT = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You distil abstract behaviour patterns from short runs of one user's consecutive "
            "interactions, for a memory shared by a recommender across all its users. "
            + DATA_NOT_INSTRUCTIONS,
        ),
        (
            "human",
            "{count} consecutive interactions of one user, oldest first (title, then categories):\n"
            "{window}\n\n"
            "Rules:\n"
            "- Stay at the level of categories and general behaviour; what you write must hold for "
            "any user who behaves this way.\n"
            "- 'behavior_explanation': one or two short sentences on the lasting tendency behind "
            "these choices. Name no specific item here: no titles, brands, artists, authors, "
            "franchises or platforms.\n"
            "- 'pattern_description': one or two short sentences on the structure of the run: which "
            "categories follow which, what repeats, what occurs together. A specific item may be "
            "named here only where it stands for a general sequence or pairing (a main product, "
            "then its add-on).\n"
            "- Be brief: at most {chars} characters per field.",
        ),
    ]
)
"""Memory creation (Eq. 2): {count}, {window}, {chars}."""

LINK = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You guard a memory of behaviour patterns shared across the users of a recommender. "
            "When a new pattern arrives you decide which stored patterns it reinforces, so that only "
            "genuinely shared tendencies are merged. " + DATA_NOT_INSTRUCTIONS,
        ),
        (
            "human",
            "New pattern:\n- Behaviour: {behavior}\n- Pattern: {pattern}\n\n"
            "Stored patterns already found close to it (cosine similarity at least {tau_low}); id in "
            "square brackets, then similarity and how often it was refined:\n{memories}\n\n"
            "Two outcomes are possible:\n"
            "- link (the stored patterns you pick are then refined with the new one): choose this "
            "when they share core categories, preferences or behavioural trends that can be "
            "merged;\n"
            "- store separately (nothing is refined, the new pattern is kept as a memory of its "
            "own): choose this when, close as they look, the new pattern belongs to a genuinely "
            "different group of users.\n"
            "The similarity check has already passed, so refuse every link only when the patterns "
            "are completely unrelated.\n\n"
            "Answer:\n"
            "- 'should_link': true to link, false to store separately.\n"
            "- 'linked_thought_ids': the ids to link, only from the list above (empty when storing "
            "separately).\n"
            "- 'reasoning': one or two short, specific sentences.",
        ),
    ]
)
"""Semantic validator (Eq. 8): {behavior}, {pattern}, {tau_low}, {memories}."""

EVOLVE = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You maintain a memory of behaviour patterns observed across many users of a "
            "recommender. When a new pattern reinforces stored ones you refine them with small, "
            "concise edits so they capture what the users share. " + DATA_NOT_INSTRUCTIONS,
        ),
        (
            "human",
            "New pattern:\n- Behaviour: {behavior}\n- Pattern: {pattern}\n\n"
            "Stored patterns linked to it (id in square brackets, then how often each was refined):\n"
            "{memories}\n\n"
            "Rules:\n"
            "- Change a stored pattern only where the new one strengthens or sharpens a shared "
            "category, preference or sequence; leave the others out of 'updates' (their text stays "
            "as it is).\n"
            "- To build up what users share, expect to refine about half to four fifths of the "
            "stored patterns listed.\n"
            "- Keep each field short (at most {chars} characters) and minimal in its changes.\n"
            "- Each entry of 'updates': 'thought_id' (an id from the list), the new "
            "'behavior_explanation' and 'pattern_description' (null keeps that field as it is) and "
            "a one-sentence 'reasoning'.\n"
            "- 'should_evolve': false when nothing is worth changing.",
        ),
    ]
)
"""Memory evolution (Eq. 9), one call for every linked memory: {behavior}, {pattern}, {memories}, {chars}."""

RANK = ChatPromptTemplate.from_messages(
    [
        (
            "system",
            "You are the ranking component of a recommender that keeps a memory of behaviour "
            "patterns shared across its users. You order candidate items by how likely one user is "
            "to choose each next. " + DATA_NOT_INSTRUCTIONS,
        ),
        (
            "human",
            "The user's recent interactions, most recent first:\n{history}\n\n"
            "Patterns from many users that resemble this user's recent activity, closest first:\n"
            "{memories}\n\n{candidates}\n\n"
            "Rules:\n"
            "- Put every candidate id in 'ranked_item_ids' exactly once, the likeliest first; use "
            "only the ids in square brackets.\n"
            "- Weigh the latest interactions most, and use the patterns to judge what tends to come "
            "next (categories, orderings, repeats); among similar items prefer those the patterns "
            "favour.\n"
            "- When the history and the patterns say little, prefer candidates of broadly relevant "
            "categories.\n"
            "- 'reasoning': one sentence on how history and patterns shaped the order, without "
            "repeating titles.",
        ),
    ]
)
"""Memory-augmented ranking: {history}, {memories}, {candidates}."""


def memory_lines(memories: Sequence[Mapping[str, Any]], with_score: bool = True) -> str:
    """One line per stored pattern: `[id] (similarity s, refined n×) behaviour …; pattern …`."""
    lines = []
    for memory in memories:
        facts = [f"similarity {memory['score']:.2f}"] if with_score and "score" in memory else []
        facts.append(f"refined {memory.get('evolution_count', 0)}x")
        lines.append(
            f"[{memory['id']}] ({', '.join(facts)}) behaviour: {quote(memory['behavior_explanation'])} "
            f"| pattern: {quote(memory['pattern_description'])}"
        )
    return "\n".join(lines) or "(none)"


def ranking_messages(
    dataset: Dataset, history: Sequence[str], memories: Sequence[Mapping[str, Any]], candidates: str
) -> list:
    """The ranker's prompt: recent history (latest first), retrieved patterns, the candidates last
    (`candidates`: the evidence contract's block, `prompts.evidence.candidates_evidence`)."""
    shown = [{k: v for k, v in m.items() if k != "id"} | {"id": f"M{n}"} for n, m in enumerate(memories, 1)]
    patterns = "\n".join(
        f"{m['id']}. {quote(m['behavior_explanation'])} {quote(m['pattern_description'])}" for m in shown
    )
    return RANK.format_messages(
        history=item_block(dataset, list(reversed(history))),
        memories=patterns or "(the memory pool holds no patterns yet)",
        candidates=candidates,
    )
