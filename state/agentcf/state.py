"""AgentCF's states: one training interaction (user agent choice, collaborative reflection) and the
memory-based ranking."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from state.base_state import BaseState
from state.blackboard import BlackboardMessage, append_messages


class InteractionInput(BaseModel):
    """One training interaction of a user: the item at `position` of their training history."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(description="The user whose training history holds the interaction.")
    position: int = Field(description="Position in the user's training history (0 = oldest).")
    user_memory: str | None = Field(
        default=None,
        description="The user agent's memory before the interaction; absent: read from agentcf_memory.",
    )
    item_memories: dict[str, str] | None = Field(
        default=None,
        description="Item id -> item agent memory before the interaction; absent: from agentcf_memory.",
    )


class InteractionOutput(TypedDict, total=False):
    """What `agentcf_train` returns: the memories it proposes (the training driver commits them)."""

    positive: str
    """Written by `interaction`: the item the user really chose (their training interaction)."""
    negative: str
    """Written by `interaction`: the sampled item the user did not choose."""
    user_memory_after: str
    """Written by `finish`: the user agent's memory after the interaction."""
    item_memories_after: dict[str, str]
    """Written by `finish`: the two item agents' memories after it (the rejected one unchanged when
    `agentcf_update_negative` is off)."""
    choices: Annotated[list[dict[str, Any]], operator.add]
    """One entry per round, by `user_agent`: {round, choice, correct, explanation}."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """Every node's blackboard posts."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """One usage record per agent invocation."""


class InteractionState(InteractionOutput, total=False):
    """The training graph's working state."""

    user_id: str
    """Input: the user."""
    position: int
    """Input: the interaction's position in the user's training history."""
    user_memory: str | None
    """Input (optional): the user agent's memory before the interaction."""
    item_memories: dict[str, str] | None
    """Input (optional): item agents' memories before the interaction."""
    order: list[str]
    """Written by `interaction`: the two items in the order the user agent sees them."""
    memory_before: dict[str, Any]
    """Written by `interaction`: {"user": memory, "items": {id: memory}} the interaction starts from."""
    reflected_user: str
    """Written by `user_reflection`: the user agent's latest self-description."""
    reflected_items: dict[str, str]
    """Written by `item_reflection`: the two item agents' latest memories."""


class AgentCFState(BaseState, total=False):
    """The ranking graph: the common blackboard plus the agents' memories."""

    user_memory: str
    """Written by `item_agents`: the user agent's memory (self-description)."""
    item_memories: dict[str, str]
    """Written by `item_agents`: candidate id -> its item agent's memory."""
    past_memories: list[str]
    """Written by `retrieve_memories` (retrieval variant): past self-descriptions retrieved."""
    details: dict[str, Any]
    """Written by `item_agents`: `trained_user` (1 when the user's agent was trained),
    `trained_candidates` (candidates whose agent was); `user_agent` adds nothing."""
