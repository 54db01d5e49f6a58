"""AgentCF's runtime knobs (graphs/agentcf/): the common `Context` plus its own."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from state.context import Context

TRAINING_FIELDS = (
    "agentcf_interactions_per_user",
    "agentcf_train_users",
    "agentcf_rounds",
    "agentcf_reflect_on_success",
    "agentcf_update_negative",
    "agentcf_user_chars",
    "agentcf_item_chars",
)
"""The knobs that shape trained memories: part of a checkpoint's key (graphs/agentcf/training.py)."""

RANKING_VARIANTS = ("basic", "sequential", "retrieval")
"""The paper's ranking prompts: memories only (B), plus the recent history (B+H), plus the user's
past self-descriptions retrieved for the candidates (B+R)."""


@dataclass(kw_only=True)
class AgentCFContext(Context):
    """AgentCF: how much training the user and item agents get, and how the user agent ranks."""

    agentcf_memory: str = field(
        default="",
        metadata={
            "description": "AgentCF memories file (JSON checkpoint written by training); empty: every "
            "agent keeps its initial memory (untrained). `recgraph bench` trains and sets it."
        },
    )
    agentcf_interactions_per_user: int = field(
        default=3,
        metadata={
            "description": "AgentCF training: each trained user's most recent training interactions "
            "replayed, oldest first (0: all of them, as the paper)."
        },
    )
    agentcf_train_users: int = field(
        default=0,
        metadata={"description": "AgentCF training: at most this many users under test (0: all)."},
    )
    agentcf_rounds: int = field(
        default=2,
        metadata={
            "description": "AgentCF training: choice-reflection rounds per interaction while the user "
            "agent keeps choosing wrongly (the authors' code: 2)."
        },
    )
    agentcf_reflect_on_success: bool = field(
        default=True,
        metadata={
            "description": "AgentCF training: after a right first choice, the user and item agents "
            "still reflect (confirming what they got right), as the paper does."
        },
    )
    agentcf_update_negative: bool = field(
        default=True,
        metadata={"description": "AgentCF training: the rejected item's agent updates its memory too."},
    )
    agentcf_user_chars: int = field(
        default=1100,
        metadata={"description": "AgentCF: longest user memory kept (characters, ~180 words)."},
    )
    agentcf_item_chars: int = field(
        default=320,
        metadata={"description": "AgentCF: longest item memory kept (characters, ~50 words)."},
    )
    agentcf_ranking: Literal["basic", "sequential", "retrieval"] = field(
        default="basic",
        metadata={
            "description": "AgentCF ranking prompt: basic (memories), sequential (plus recent history), "
            "retrieval (plus past self-descriptions retrieved for the candidates)."
        },
    )
    agentcf_history_items: int = field(
        default=10,
        metadata={"description": "AgentCF sequential ranking: recent history items shown."},
    )
    agentcf_retrieved: int = field(
        default=2,
        metadata={"description": "AgentCF retrieval ranking: past self-descriptions retrieved."},
    )
