"""Step-label normalisation: the raw labels a model writes ("Step 2: User-Profile Analysis!") become
a small vocabulary of operations ("user profile assessment") before they are embedded and clustered.

The rules, in order:
1. lowercase, `&` read as "and";
2. strip a leading numbering ("step 3:", "3.", "(b)", "iv)", "- ") and any trailing "step";
3. punctuation becomes spaces, whitespace collapses;
4. `WORD_SYNONYMS` rewrites single words (spelling variants and near-synonyms of one operation);
5. `PHRASE_SYNONYMS` rewrites a whole normalised label (different wordings of one operation).
"""

from __future__ import annotations

import re

WORD_SYNONYMS: dict[str, str] = {
    # one spelling
    "favorite": "favourite",
    "favorites": "favourite",
    "favourites": "favourite",
    "behavior": "behaviour",
    "behaviors": "behaviour",
    "analyze": "analyse",
    "summarize": "summarise",
    "prioritize": "prioritise",
    "prioritization": "prioritisation",
    # one operation noun
    "analysis": "assessment",
    "analyse": "assessment",
    "evaluation": "assessment",
    "evaluate": "assessment",
    "check": "assessment",
    "review": "assessment",
    "examination": "assessment",
    "profiling": "profile",
    "profiles": "profile",
    "preferences": "preference",
    "tastes": "preference",
    "taste": "preference",
    "interests": "interest",
    "genres": "genre",
    "themes": "theme",
    "candidates": "candidate",
    "items": "item",
    "dislikes": "dislike",
    "likes": "like",
    "cue": "preference",
    "cues": "preference",
    "drift": "shift",
    "ordering": "ranking",
    "intent": "interest",
    # one horizon word
    "longterm": "long term",
    "shortterm": "short term",
    "lasting": "long term",
    "recent": "short term",
}
"""Single-word rewrites (applied to every token)."""

PHRASE_SYNONYMS: dict[str, str] = {
    "final ranking synthesis": "final ranking",
    "consolidated ranking": "final ranking",
    "ranking synthesis": "final ranking",
    "final holistic prioritisation": "final ranking",
    "rank candidate": "final ranking",
    "user profile synthesis": "user profile",
    "user preference profile": "user profile",
    "user behaviour profile": "user profile",
    "positive preference matching": "positive preference",
    "negative preference filtering": "negative preference",
    "dislike filtering": "negative preference",
}
"""Whole-label rewrites (applied after the word rewrites), e.g. three wordings of the final ranking."""

_NUMBERING = re.compile(
    r"^\s*(?:step\s*\d+\s*[:.)\-]?|\d+\s*[:.)\-]|\(?[a-z]\)|\(?[ivx]+\)|[-*•]+)\s*", re.IGNORECASE
)
_TRAILING_STEP = re.compile(r"\s+step\s*$")
_PUNCTUATION = re.compile(r"[^\w\s]|_")


def normalise_label(label: str) -> str:
    """The operation a raw step label names (see the module docstring for the rules); '' when nothing
    is left."""
    text = label.lower().replace("&", " and ")
    previous = None
    while previous != text:  # "Step 2: (b) ..." carries two numberings
        previous, text = text, _NUMBERING.sub("", text, count=1)
    text = _PUNCTUATION.sub(" ", text)
    words = [WORD_SYNONYMS.get(word, word) for word in text.split()]
    text = _TRAILING_STEP.sub("", " ".join(" ".join(words).split()))
    return PHRASE_SYNONYMS.get(text, text)
