"""AgentCF's memories as text, and the deterministic reading and writing of them that every fallback
uses.

Initial memories (the paper initialises item agents from their metadata and user agents from a
generic self-description):
- an item agent: its title, then "About: <categories>" when the catalog has categories;
- a user agent: `INITIAL_USER_MEMORY` (no preference known yet).

Terms: an item's own features are the words of its categories, or of its title when the catalog has
none (a titles-only catalog). A memory is read as two ordered term lists: what the text says before
its first negative marker ("dislike", "passed over", "rejected") and what it says after; for a user
that is likes and dislikes (the first the strongest: the newest), for an item the users it suits and
the users who passed it over. The heuristic writers produce exactly that layout, and an LLM's free
text is read the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from world.data import Item

INITIAL_USER_MEMORY = "I have no recorded preferences or dislikes yet."
"""Every user agent's memory before training (the paper's generic self-introduction)."""

LIKES_KEPT = 10
"""Heuristic user memory: liked terms kept, newest first."""
DISLIKES_KEPT = 6
"""Heuristic user memory: disliked terms kept, newest first."""
GROUP_KEPT = 6
"""Heuristic item memory: terms kept per user group (liked by / passed over by)."""
SPREAD = 3
"""Heuristic reflection: how many of the user's liked terms an item agent records."""

_NEGATIVE = re.compile(r"\b(dislike[sd]?|passed over|rejected|avoid[s]?)\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z0-9][a-z0-9'&-]*")
_STOP_TEXT = """a about above after again all also an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have
having he her here hers him his how i if in into is it its itself just me more most my no nor not
now of off on once only or other our out over own same she should so some such than that the their
them then there these they this those through to too under until up very was we were what when
where which while who whom why will with would you your yet recorded preferences preference
prefer prefers like likes liked liking enjoy enjoys enjoyed users user item items others other
passed rejected dislike dislikes disliked avoid avoids new one two three know known"""
STOPWORDS = frozenset(_STOP_TEXT.split())
"""Words that carry no taste: function words and the memories' own framing words."""


def words(text: str) -> list[str]:
    """The content words of `text`, lower case, in order, each once (no digits-only words, none
    shorter than three characters, no stopwords)."""
    found = (w.strip("'-&") for w in _WORD.findall(text.lower()))
    kept = (w for w in found if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS)
    return list(dict.fromkeys(kept))


def features(item: Item) -> list[str]:
    """An item's own terms: its categories' words, else its title's."""
    return words(" ".join(item.categories)) if item.categories else words(item.title)


def split_terms(text: str) -> tuple[list[str], list[str]]:
    """(positive terms, negative terms) of a memory: the words before and after its first negative
    marker."""
    marker = _NEGATIVE.search(text)
    if marker is None:
        return words(text), []
    return words(text[: marker.start()]), words(text[marker.end() :])


def item_terms(item: Item, memory: str) -> tuple[list[str], list[str]]:
    """(terms the item suits, terms of users who passed it over): its own features first, then what
    its memory adds; title words count only as features (a titles-only catalog)."""
    body = memory[len(item.title) :] if memory.startswith(item.title) else memory
    positive, negative = split_terms(body)
    return _unique([*features(item), *positive]), negative


def initial_item_memory(item: Item) -> str:
    """The item agent's memory before training: its title, and its categories when it has any."""
    return render_item(item, [], [])


def render_user(likes: Sequence[str], dislikes: Sequence[str], max_chars: int) -> str:
    """The heuristic user memory: "I like items about: a, b. I dislike items about: c." (cut to
    `max_chars` at a term boundary)."""
    if not likes and not dislikes:
        return INITIAL_USER_MEMORY
    parts = []
    if likes:
        parts.append("I like items about: " + ", ".join(likes) + ".")
    if dislikes:
        parts.append("I dislike items about: " + ", ".join(dislikes) + ".")
    return _cut(" ".join(parts), max_chars)


def render_item(item: Item, liked_by: Sequence[str], passed_by: Sequence[str], max_chars: int = 0) -> str:
    """The heuristic item memory: title, "About: <categories>", "Liked by users who like: ...",
    "Passed over by users who like: ..." (empty parts left out; cut to `max_chars` when > 0)."""
    parts = [item.title.rstrip(".") + "."]
    if item.categories:
        parts.append("About: " + ", ".join(c.lower() for c in item.categories) + ".")
    if liked_by:
        parts.append("Liked by users who like: " + ", ".join(liked_by) + ".")
    if passed_by:
        parts.append("Passed over by users who like: " + ", ".join(passed_by) + ".")
    text = " ".join(parts)
    return _cut(text, max_chars) if max_chars > 0 else text


def history_memory(items: Mapping[str, Item], history: Sequence[str], max_chars: int) -> str:
    """A user memory made of the terms of `history`'s items (`items`: the catalog by id), most
    recent first, likes only (what the sequential ranking adds, and what stands in for a memory a
    scenario may not show)."""
    terms = [t for item in reversed(history) for t in features(items[item])]
    return render_user(list(dict.fromkeys(terms)), [], max_chars)


def _unique(terms: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(terms))


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[:max_chars].rsplit(",", 1)[0].rstrip(" ,.")
    return cut + "."


def reflect_user(memory: str, chosen: tuple[Item, str], rejected: tuple[Item, str], max_chars: int) -> str:
    """The heuristic user reflection: the chosen item's terms become the newest likes, the rejected
    item's terms it does not share become the newest dislikes, and old likes or dislikes that
    contradict them are dropped."""
    likes, dislikes = split_terms(memory)
    gained = item_terms(*chosen)[0][:4]
    lost = [t for t in item_terms(*rejected)[0][:4] if t not in gained]
    new_likes = _unique([*gained, *(t for t in likes if t not in lost)])[:LIKES_KEPT]
    new_dislikes = _unique([*lost, *(t for t in dislikes if t not in gained)])[:DISLIKES_KEPT]
    return render_user(new_likes, new_dislikes, max_chars)


def reflect_items(
    user_memory: str, chosen: tuple[Item, str], rejected: tuple[Item, str], max_chars: int
) -> tuple[str, str]:
    """The heuristic item reflection: the chosen item records the user's strongest likes among the
    users it suits; the rejected one records them among the users who passed it over."""
    taste = split_terms(user_memory)[0][:SPREAD]
    (good, good_memory), (bad, bad_memory) = chosen, rejected
    good_liked, good_passed = _groups(good, good_memory)
    bad_liked, bad_passed = _groups(bad, bad_memory)
    good_text = render_item(
        good,
        _unique([*taste, *good_liked])[:GROUP_KEPT],
        [t for t in good_passed if t not in taste][:GROUP_KEPT],
        max_chars,
    )
    bad_text = render_item(
        bad,
        [t for t in bad_liked if t not in taste][:GROUP_KEPT],
        _unique([*taste, *bad_passed])[:GROUP_KEPT],
        max_chars,
    )
    return good_text, bad_text


def _groups(item: Item, memory: str) -> tuple[list[str], list[str]]:
    """(liked-by terms, passed-over terms) a memory records beyond the item's own features."""
    positive, negative = item_terms(item, memory)
    own = set(features(item))
    return [t for t in positive if t not in own], negative


def affinity(user_memory: str, item: Item, item_memory: str, dislike: float = 1.0) -> float:
    """How well an item suits a user by their memories: each of the item's terms adds the weight of a
    matching like and subtracts that of a matching dislike (the newest weigh most), the users who
    passed it over subtract half the weight of matching likes; divided by the square root of the
    item's term count (a long memory is not a better item). `dislike` scales the two subtractions."""
    likes, dislikes = split_terms(user_memory)
    like_weight = {t: 1.0 / (1.0 + 0.2 * k) for k, t in enumerate(likes)}
    dislike_weight = {t: 1.0 / (1.0 + 0.2 * k) for k, t in enumerate(dislikes)}
    positive, negative = item_terms(item, item_memory)
    score = sum(like_weight.get(t, 0.0) - dislike * dislike_weight.get(t, 0.0) for t in positive)
    score -= dislike * 0.5 * sum(like_weight.get(t, 0.0) for t in negative)
    return score / max(len(positive), 1) ** 0.5
