"""Collaborative reflection (the paper's backward step): after the real outcome is revealed, the user
agent rewrites its self-description, then the item agents rewrite both items' descriptions, reading
the user's revised one. A wrong choice and a right one have prompts of their own.

Validation: a memory may not be empty; one longer than its cap is cut (`memory_cut`), an item
description that does not name its item gets the title in front (`title_added`), so that every
item memory still says what the item is.
Fallback: `agents.agentcf.memory.reflect_user` and `reflect_items` (term-level updates).
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.agentcf.choose import shown_order
from agents.agentcf.memory import reflect_items, reflect_user
from agents.agentcf.plan import Interaction
from agents.base import AgentTask, InvalidAnswer
from agents.validation import constrained_schema
from prompts.agentcf import (
    ITEM_REFLECTION_RIGHT,
    ITEM_REFLECTION_WRONG,
    USER_REFLECTION_RIGHT,
    USER_REFLECTION_WRONG,
    memory_lines,
)
from prompts.common import quote
from state.agentcf.context import AgentCFContext
from state.agentcf.schemas import ItemReflection, UserReflection
from world.data import Item
from world.environment import Environment

CHARS_PER_WORD = 6
"""Characters per word when a character cap is stated to the model as words."""


def kept_memory(text: str, max_chars: int, what: str) -> tuple[str, list[str]]:
    """A memory as stored: whitespace collapsed, cut at a word boundary to `max_chars`."""
    flat = " ".join(text.split())
    if not flat:
        raise InvalidAnswer(f"{what} is empty")
    if len(flat) <= max_chars:
        return flat, []
    return flat[:max_chars].rsplit(" ", 1)[0].rstrip(" ,;") + ".", ["memory_cut"]


def named_item(item: Item, text: str, max_chars: int, what: str) -> tuple[str, list[str]]:
    """An item memory as stored: kept to `max_chars`, the title in front when the text lacks it."""
    repairs: list[str] = []
    if not text.strip():
        raise InvalidAnswer(f"{what} is empty")
    if item.title.lower() not in text.lower():
        text, repairs = f"{item.title.rstrip('.')}. {text}", ["title_added"]
    kept, cut = kept_memory(text, max_chars, what)
    return kept, repairs + cut


def _slots(
    ctx: AgentCFContext, memory: str, memories: Mapping[str, str], step: Interaction, picked: str,
    explanation: str, words: int,
) -> dict[str, str]:
    return {
        "user_memory": quote(memory, ctx.agentcf_user_chars),
        "items": memory_lines(memories, shown_order(step), ctx.agentcf_item_chars),
        "picked": picked,
        "explanation": quote(explanation or "(none given)", 400),
        "chosen": step.positive,
        "rejected": step.negative,
        "words": str(words),
    }  # fmt: skip


def user_reflection_task(
    env: Environment, ctx: AgentCFContext, memory: str, memories: Mapping[str, str], step: Interaction,
    picked: str, explanation: str,
) -> AgentTask[UserReflection]:
    """The user agent's reflection on one interaction (the right-choice prompt when `picked` is the
    real item)."""
    prompt = USER_REFLECTION_RIGHT if picked == step.positive else USER_REFLECTION_WRONG
    words = ctx.agentcf_user_chars // CHARS_PER_WORD
    messages = prompt.format_messages(**_slots(ctx, memory, memories, step, picked, explanation, words))
    items = env.dataset.items

    def validate(answer: UserReflection) -> tuple[UserReflection, list[str]]:
        text, repairs = kept_memory(answer.self_description, ctx.agentcf_user_chars, "self_description")
        return UserReflection(self_description=text), repairs

    def fallback() -> UserReflection:
        chosen = (items[step.positive], memories[step.positive])
        rejected = (items[step.negative], memories[step.negative])
        return UserReflection(self_description=reflect_user(memory, chosen, rejected, ctx.agentcf_user_chars))

    return AgentTask(
        agent="user_reflection",
        role="mem",
        messages=messages,
        schema=UserReflection,
        validate=validate,
        fallback=fallback,
        json_schema=constrained_schema(UserReflection),
    )  # fmt: skip


def item_reflection_task(
    env: Environment, ctx: AgentCFContext, user_memory: str, memories: Mapping[str, str],
    step: Interaction, picked: str, explanation: str,
) -> AgentTask[ItemReflection]:
    """The two item agents' reflection on one interaction, reading the user's revised memory."""
    prompt = ITEM_REFLECTION_RIGHT if picked == step.positive else ITEM_REFLECTION_WRONG
    words = ctx.agentcf_item_chars // CHARS_PER_WORD
    slots = _slots(ctx, user_memory, memories, step, picked, explanation, words)
    messages = prompt.format_messages(**slots)
    chosen, rejected = env.dataset.items[step.positive], env.dataset.items[step.negative]
    cap = ctx.agentcf_item_chars

    def validate(answer: ItemReflection) -> tuple[ItemReflection, list[str]]:
        good, fixed = named_item(chosen, answer.chosen_description, cap, "chosen_description")
        bad, more = named_item(rejected, answer.rejected_description, cap, "rejected_description")
        return ItemReflection(chosen_description=good, rejected_description=bad), fixed + more

    def fallback() -> ItemReflection:
        good, bad = reflect_items(
            user_memory, (chosen, memories[step.positive]), (rejected, memories[step.negative]), cap
        )
        return ItemReflection(chosen_description=good, rejected_description=bad)

    return AgentTask(
        agent="item_reflection",
        role="mem",
        messages=messages,
        schema=ItemReflection,
        validate=validate,
        fallback=fallback,
        json_schema=constrained_schema(ItemReflection),
    )  # fmt: skip
