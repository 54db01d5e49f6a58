"""LLMRank's three prompting strategies (Hou et al., ECIR 2024), as history slices and prompt slots.

All three show the most recent `llmrank_history_items` interactions, numbered in the order they
happened, and ask for a ranking of the candidates:
- sequential: the numbered history alone;
- recency-focused: the same, then a sentence naming the latest interaction again
  (`{latest}`), which the paper found makes the model notice the order;
- in-context learning: a demonstration built from the user's own record: the shown history without
  its last item (`{demo_history}`) is followed by that last item as the right answer
  (`{demo_answer}`), then the real request; the demonstration never uses the held-out target, which
  the history does not contain.
Fallbacks rank by MiniLM cosine to the shown history (recency-focused: with the latest item weighing
as much as all the others together; popularity without history).
"""

from __future__ import annotations

from collections.abc import Sequence

from prompts.common import item_block, item_line
from state.baselines.context import BaselinesContext
from world.environment import Environment


def shown_history(
    env: Environment, ctx: BaselinesContext, history: Sequence[str], candidates: Sequence[str]
) -> list[str]:
    """The most recent `llmrank_history_items` interactions, oldest first (all when 0)."""
    limit = ctx.llmrank_history_items
    return list(history[-limit:]) if limit > 0 else list(history)


def numbered_history(env: Environment, shown: list[str], start: int = 1) -> str:
    """One line per item, numbered from `start` in the order they happened."""
    lines = [f"{position}. {item_line(env.dataset, item)}" for position, item in enumerate(shown, start)]
    return "\n".join(lines) or "(none)"


def recency_slots(env: Environment, shown: list[str]) -> dict[str, str]:
    """`{latest}`: the most recent interaction's line."""
    return {"latest": item_block(env.dataset, shown[-1:])}


def recency_profile(shown: list[str]) -> list[str]:
    """The shown items plus the latest one repeated as often: it weighs half the profile."""
    return [*shown, *shown[-1:] * len(shown)]


def icl_slots(env: Environment, shown: list[str]) -> dict[str, str]:
    """`{demo_history}` (the shown history but its last item) and `{demo_answer}` (that item)."""
    return {
        "demo_history": numbered_history(env, shown[:-1]),
        "demo_answer": item_block(env.dataset, shown[-1:]),
    }
