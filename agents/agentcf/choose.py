"""The user agent's choice between two items (the paper's autonomous interaction): the real item of a
training interaction and a sampled one, each shown with its item agent's memory.

Fallback: the item whose memory suits the user's memory better (`agents.agentcf.memory.affinity`);
on a tie the more popular one in training, then the one shown first.
"""

from __future__ import annotations

from collections.abc import Mapping

from agents.agentcf.memory import affinity
from agents.agentcf.plan import Interaction
from agents.base import AgentTask, InvalidAnswer
from agents.validation import constrained_schema, cut_text
from prompts.agentcf import CHOICE, memory_lines
from prompts.common import quote
from state.agentcf.context import AgentCFContext
from state.agentcf.schemas import Choice
from world.environment import Environment

EXPLANATION_CHARS = 400
"""Longest explanation kept (it is quoted into the reflections' prompts)."""


def shown_order(step: Interaction) -> list[str]:
    """The two items in the order the user agent sees them."""
    return [step.positive, step.negative] if step.positive_first else [step.negative, step.positive]


def heuristic_pick(env: Environment, user_memory: str, memories: Mapping[str, str], order: list[str]) -> str:
    """The fallback's choice (see the module docstring)."""

    def key(position: int) -> tuple[float, int, int]:
        item = order[position]
        suit = affinity(user_memory, env.dataset.items[item], memories[item])
        return (-round(suit, 9), -env.popularity.get(item, 0), position)

    return order[min(range(len(order)), key=key)]


def choice_task(
    env: Environment, ctx: AgentCFContext, user_memory: str, memories: Mapping[str, str], step: Interaction
) -> AgentTask[Choice]:
    """The user agent's choice for one replayed interaction."""
    order = shown_order(step)
    messages = CHOICE.format_messages(
        user_memory=quote(user_memory, ctx.agentcf_user_chars),
        items=memory_lines(memories, order, ctx.agentcf_item_chars),
    )

    def validate(answer: Choice) -> tuple[Choice, list[str]]:
        picked = answer.choice.strip().strip("[]").strip()
        if picked not in order:
            raise InvalidAnswer(f"'choice' must be one of the two ids {order}, not {answer.choice!r}")
        explanation = cut_text(" ".join(answer.explanation.split()), EXPLANATION_CHARS)
        return Choice(choice=picked, explanation=explanation), []

    def fallback() -> Choice:
        picked = heuristic_pick(env, user_memory, memories, order)
        other = order[1] if picked == order[0] else order[0]
        return Choice(choice=picked, explanation=f"memory terms suit [{picked}] better than [{other}]")

    schema = constrained_schema(
        Choice, {"choice": {"enum": order}, "explanation": {"maxLength": EXPLANATION_CHARS}}
    )
    return AgentTask(
        agent="user_agent",
        role="rec",
        messages=messages,
        schema=Choice,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    )
