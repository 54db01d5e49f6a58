"""AMEM4Rec's states: one training window through Algorithm 1, and the memory-augmented ranking."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from state.base_state import BaseState
from state.blackboard import BlackboardMessage, append_messages


class WindowInput(BaseModel):
    """One training window: `amem4rec_window` consecutive items of a user's training history."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(description="The user whose training history the window is cut from.")
    start: int = Field(
        description="Position of the window's first item in the training history (0 = oldest)."
    )


class WindowOutput(TypedDict, total=False):
    """What `amem4rec_train` returns."""

    window_key: str
    """Written by `validate_window`: `<user>:<start>`, the window's id in the pool's ledger."""
    action: str
    """Written by `similarity_validator`: Eq. 7's decision (store_only, update_and_store, update_only)."""
    linked: list[str]
    """Written by `semantic_validator`: ids of the memories linked to the new one."""
    plan: dict[str, Any]
    """Written by `commit`: the window's commit plan (new memory, rewrites, versions read)."""
    status: str
    """Written by `commit`: "applied", "already applied" or "proposed"."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """Every node's blackboard posts, in order."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """One usage record per agent invocation (extract, semantic_validator, evolve)."""


class WindowState(WindowOutput, total=False):
    """Blackboard of `amem4rec_train`; each field has exactly one writer."""

    user_id: str
    """Input: the user."""
    start: int
    """Input: the window's first position in the training history."""
    items: list[str]
    """Written by `validate_window`: the window's item ids, oldest first (training items only)."""
    memory: dict[str, str]
    """Written by `extract`: the new pattern p {behavior_explanation, pattern_description}."""
    extraction_failed: bool
    """Written by `extract`: True when a model backend's extraction call failed (after its retries);
    the window then goes straight to the commit and stores nothing (no `memory`)."""
    embedding: str
    """Written by `similarity_validator`: e = Encode(p), float32 bytes in base64."""
    neighbours: list[dict[str, Any]]
    """Written by `similarity_validator`: the top-|L| pool memories {id, score, version,
    behavior_explanation, pattern_description, evolution_count}, most similar first."""
    stats: dict[str, Any]
    """Written by `similarity_validator`: s_max, p_high, p_medium, p_low, the Eq. 7 row and k."""
    offered: list[str]
    """Written by `similarity_validator`: ids the semantic validator may link (s >= tau_low, or
    every neighbour without the similarity validator)."""
    store_separately: bool
    """Written by `semantic_validator`: the model chose "store separately" (should_link false): nothing
    is evolved and the new memory is stored even when Eq. 7 said UPDATE only."""
    link_reasoning: str
    """Written by `semantic_validator`: why these memories were (not) linked."""
    rewrites: list[dict[str, Any]]
    """Written by `evolve`: {thought_id, behavior_explanation, pattern_description, reasoning,
    base_version} for each linked memory the evolver changed."""


class Amem4RecState(BaseState, total=False):
    """Blackboard of the `amem4rec` ranking graph; each field below has exactly one writer."""

    query: str
    """Written by `retrieve_memories`: the recent-history text that queried the pool."""
    memories: list[dict[str, Any]]
    """Written by `retrieve_memories`: the top-K memories {id, score, behavior_explanation,
    pattern_description, evolution_count}, most similar first."""
    memory_vectors: list[str]
    """Written by `retrieve_memories`: the retrieved memories' embeddings (float32, base64), in order."""
    pool_size: int
    """Written by `retrieve_memories`: memories in the pool that was searched."""
    reasoning: str
    """Written by `rank`: the ranker's one-sentence reasoning."""
