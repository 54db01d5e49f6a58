"""T(i) in ARAG's prompts: an item's title line, then its description and a sample of its reviews.

The paper's NLI, context-summary and ranking agents read each item's text T(i) = title,
description, reviews (4.2). Each candidate is shown as its usual line (`prompts.common.item_line`:
id, title, year, categories) and, where the dataset has them, two indented lines: the description
and the item's review sample (`world.item_reviews`: training interactions only), every text quoted
as data and cut to a bound so that a long description cannot crowd out the rest of the prompt.
A title-only dataset gets exactly the item lines it got before.
"""

from __future__ import annotations

from collections.abc import Sequence

from prompts.common import CANDIDATES_HEADER, item_line, quote
from world.environment import Environment
from world.item_reviews import item_reviews

DESCRIPTION_CHARS = 300
"""Cap on a description in a prompt (characters, inside the quotes)."""
REVIEW_CHARS = 160
"""Cap on one review in a prompt."""


def item_text(env: Environment, item_id: str, head: str | None = None) -> str:
    """The item's line (or `head`, a line already built for it) with its description and reviews
    on indented lines below."""
    lines = [head if head is not None else item_line(env.dataset, item_id)]
    description = env.dataset.items[item_id].description
    if description and description.strip():
        lines.append(f"    description: {quote(description, DESCRIPTION_CHARS)}")
    reviews = item_reviews(env, item_id)
    if reviews:
        lines.append("    reviews: " + ", ".join(quote(text, REVIEW_CHARS) for text in reviews))
    return "\n".join(lines)


def item_text_block(env: Environment, item_ids: Sequence[str]) -> str:
    """`item_text` of every id, one after the other."""
    return "\n".join(item_text(env, i) for i in item_ids) or "(none)"


def candidates_text(env: Environment, item_ids: Sequence[str]) -> str:
    """The candidate list under the shared header, each candidate with its T(i)."""
    return f"{CANDIDATES_HEADER}\n{item_text_block(env, item_ids)}"
