"""Readable words for synthetic catalogs: category names and item titles made of generated words.

Titles are built from pseudo-words (consonant-vowel syllables) so that they read like product
names, never like ids; items of one category share a theme word, so text similarity over titles
carries some of the category signal even when the catalog has no category field.
"""

from __future__ import annotations

import numpy as np

GENRES = (
    "Ambient", "Blues", "Classical", "Country", "Disco", "Electronic", "Folk", "Funk", "Gospel",
    "Jazz", "Latin", "Metal", "Opera", "Pop", "Punk", "Reggae", "Rock", "Soul", "Soundtrack",
    "Swing", "Techno", "World", "Bluegrass", "Chamber", "Choral", "Dub", "Grunge", "House",
    "Indie", "Lounge", "Motown", "Polka", "Ragtime", "Salsa", "Ska", "Tango", "Trance", "Waltz",
    "Zydeco", "Baroque",
)  # fmt: skip
"""Category names (more are generated when a catalog asks for more categories)."""
THEMES = (
    "Nights", "Sessions", "Collection", "Anthology", "Live", "Stories", "Dreams", "Roads",
    "Echoes", "Tales", "Hours", "Lights", "Waves", "Voices", "Letters", "Seasons",
)  # fmt: skip
"""Second words of titles (shared across categories)."""
ONSETS = ("b", "br", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "st", "t", "v", "z")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "io")
CODAS = ("", "", "n", "r", "s", "l", "th")


def pseudo_words(rng: np.random.Generator, count: int, syllables: tuple[int, int] = (2, 3)) -> list[str]:
    """`count` distinct capitalised pseudo-words of 2-3 syllables (e.g. "Velora", "Kantis")."""
    words: dict[str, None] = {}
    while len(words) < count:
        need = (count - len(words)) * 2
        lengths = rng.integers(syllables[0], syllables[1] + 1, size=need)
        onsets = rng.integers(len(ONSETS), size=(need, syllables[1]))
        vowels = rng.integers(len(VOWELS), size=(need, syllables[1]))
        codas = rng.integers(len(CODAS), size=need)
        for row in range(need):
            syllable = (ONSETS[onsets[row, k]] + VOWELS[vowels[row, k]] for k in range(lengths[row]))
            words.setdefault(("".join(syllable) + CODAS[codas[row]]).capitalize(), None)
            if len(words) == count:
                break
    return list(words)


def category_names(rng: np.random.Generator, count: int) -> list[str]:
    """`count` single-word category names: the genre list first, then generated words."""
    if count <= len(GENRES):
        return list(GENRES[:count])
    extra = [w for w in pseudo_words(rng, count) if w not in GENRES]
    return [*GENRES, *extra[: count - len(GENRES)]]


def item_titles(rng: np.random.Generator, item_category: np.ndarray, names: list[str]) -> list[str]:
    """One title per item: "<Word> <Word> <Theme>" plus the category's own word, so that items of
    one category read alike; titles are unique (a volume number settles collisions)."""
    n_items = len(item_category)
    vocabulary = pseudo_words(rng, max(200, int(np.sqrt(n_items) * 6)))
    first = rng.integers(len(vocabulary), size=n_items)
    second = rng.integers(len(vocabulary), size=n_items)
    theme = rng.integers(len(THEMES), size=n_items)
    seen: dict[str, int] = {}
    titles = []
    for i in range(n_items):
        title = f"{vocabulary[first[i]]} {vocabulary[second[i]]} {names[item_category[i]]} {THEMES[theme[i]]}"
        count = seen.get(title, 0)
        seen[title] = count + 1
        titles.append(title if count == 0 else f"{title} Vol. {count + 1}")
    return titles
