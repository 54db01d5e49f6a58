"""MemRec's optional LM_Mem initialisation pass: one call per user writes the user's first memory
from their training history (never validation or test), replacing the deterministic profile.

Fallback: the deterministic profile itself (`tools.memrec.graph.user_memory`). Applied through the
durable writer as `replace` against version 0, so a user whose memory was already changed (by
Stage W or an earlier pass) is merged, never overwritten, and a rerun applies nothing twice.
"""

from __future__ import annotations

from collections import Counter

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.write import MEMORY_CHARS
from agents.validation import EMPTY_ANSWER, MEMORY_CUT, constrained_schema, cut_text
from prompts import memrec as prompts
from prompts.common import quote, quote_list
from state.memrec.schemas import InitialMemory
from tools.memrec.graph import user_memory, user_node
from tools.memrec.writer import NodeUpdate, PropagationJob
from world.environment import Environment

HISTORY_ITEMS = 30
"""The prompt shows at most this many of the most recent training items."""


def init_job_id(user_id: str) -> str:
    """Id of a user's initialisation job (one per user and memory graph)."""
    return f"init:{user_id}"


def init_task(env: Environment, user_id: str) -> AgentTask[InitialMemory]:
    """The initialisation agent task of one user."""
    case = env.cases.get(user_id)
    history = list(case.history[-HISTORY_ITEMS:]) if case else []
    items = env.dataset.items
    shown = [items[e.item_id] for e in history]
    lines = [f"- {quote(item.title, 100)}" for item in shown]
    lines = [
        line + (f" | categories: {quote_list(item.categories, 3)}" if item.categories else "")
        for line, item in zip(lines, shown, strict=True)
    ]
    counts = Counter(c for e in history for c in items[e.item_id].categories)
    messages = prompts.INIT.format_messages(
        user=user_node(user_id),
        history="\n".join(lines) or "(none)",
        categories=quote_list(c for c, _ in counts.most_common(5)) or "(none)",
        memory_chars=MEMORY_CHARS,
    )

    def validate(answer: InitialMemory) -> tuple[InitialMemory, list[str]]:
        text = " ".join(answer.memory.split())
        if not text:
            raise InvalidAnswer("'memory' is empty", EMPTY_ANSWER)
        if len(text) > MEMORY_CHARS:
            return InitialMemory(memory=cut_text(text, MEMORY_CHARS)), [MEMORY_CUT]
        return InitialMemory(memory=text), []

    def fallback() -> InitialMemory:
        return InitialMemory(memory=user_memory(env, user_id))

    schema = constrained_schema(InitialMemory, {"memory": {"minLength": 1}})
    return AgentTask(
        agent="initialise",
        role="mem",
        messages=messages,
        schema=InitialMemory,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    )


def init_job(user_id: str, answer: InitialMemory) -> PropagationJob:
    """The job that installs a user's initial memory (replace as of version 0)."""
    return PropagationJob(
        init_job_id(user_id), (NodeUpdate(user_node(user_id), answer.memory, "replace", 0),)
    )
