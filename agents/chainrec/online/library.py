"""The Tool Agent Library: every evidence tool's fetch function by name (the catalog says what the
planner sees of them; tool_agent.py how a call becomes an agent task and a memory entry)."""

from __future__ import annotations

from agents.chainrec.online.catalog import (
    AUTHOR,
    GEO,
    ITEM_PROFILE,
    ITEM_SEMANTIC,
    LONG_TERM,
    NEGATIVE,
    POSITIVE,
    SHORT_TERM,
)
from agents.chainrec.online.domain_tools import author_preference, geo_context
from agents.chainrec.online.item_tools import item_profile, item_semantic
from agents.chainrec.online.sentiment_tools import negative, positive
from agents.chainrec.online.tool_agent import FetchFn
from agents.chainrec.online.user_tools import long_term, short_term

LIBRARY: dict[str, FetchFn] = {
    LONG_TERM: long_term,
    SHORT_TERM: short_term,
    POSITIVE: positive,
    NEGATIVE: negative,
    ITEM_SEMANTIC: item_semantic,
    ITEM_PROFILE: item_profile,
    AUTHOR: author_preference,
    GEO: geo_context,
}
"""Tool name -> what it fetches and how it answers without an LLM."""
