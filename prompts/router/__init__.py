"""The router's prompt additions: its planner sees each action's planned cost (the rest of its
prompts are ChainRec's, prompts/chainrec/)."""

from __future__ import annotations

COST_NOTE = (
    "Each tool's cost is what one call is planned to take from the language model (requests and "
    "tokens); a tool with no LLM call is free. The episode is scored on ranking quality minus a charge "
    "for every call and every token, so call a costly tool only when its evidence is likely to change "
    "the ranking."
)
"""Appended to the LLM planner's tool catalog when the catalog carries costs (the router's)."""
