"""Cleaning the text fields loaders read: the one place HTML remnants in titles are handled."""

from __future__ import annotations

import html
import re

_TAG = re.compile(r"<[^>]+>")
_MAX_UNESCAPES = 3
"""Scraped catalogs double-encode (`&amp;amp;`); decode until stable, at most this many times."""


def clean_title(raw: str) -> str:
    """A title (or other short text) as a reader sees it: HTML tags dropped, entities decoded
    (`&amp;` -> `&`, `&#39;` -> `'`, also when double-encoded), whitespace collapsed."""
    text = _TAG.sub(" ", raw)
    for _ in range(_MAX_UNESCAPES):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    return " ".join(text.split())
