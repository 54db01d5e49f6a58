"""GraphSignal (a router method tool): LightGCN's scores of the candidates, from the model the
baselines room trains and caches (agents/router/method_tools/trained_models.py).

LightGCN propagates over the whole user-item graph, so it carries higher-order collaborative
structure that item-kNN's co-occurrence and BPR's factors do not. In the classic scenario it scores
with the user's own embedding, elsewhere with the mean of the visible items' (the baseline's rule).
No LLM call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.tool_agent import Episode, Fetched
from agents.router.method_tools import trained_models
from world.environment import Environment

NAME = "GraphSignal"
MODELS = ("lightgcn",)
"""The trained graph baseline the tool reads."""
SPEC = ToolSpec(
    NAME,
    "graph_signal",
    "item",
    "A trained graph model (LightGCN) over every candidate: how close it lies to the user in the "
    "user-item graph propagated over every user's training interactions.",
    "get_user for the visible history, get_item for every candidate; the trained model",
    "one entry per candidate (graph score 0-1, rank-normalised); no LLM call",
    weight_field="chainrec_weight_graph",
)
"""What the planner sees of GraphSignal."""
PREREQUISITE: tuple[str, ...] = MODELS
"""The registry method whose `prepare` hook trains what it reads."""
BLOCKING = True
"""The first fetch of a process reads the embeddings from disk: off the event loop."""


def model_names(ctx: object) -> tuple[str, ...]:
    """The model it reads (LightGCN; no knob chooses among one)."""
    return MODELS


def unavailable(env: Environment, ctx: object) -> str | None:
    """Why GraphSignal cannot run on this dataset (LightGCN not trained), or None."""
    return trained_models.unavailable_reason(env, ctx, MODELS)


def episode_unavailable(env: Environment, ctx: object, episode: Mapping[str, Any]) -> str | None:
    """Why it cannot score this episode (a cold user, every candidate cold), or None."""
    return trained_models.episode_reason(env, episode)


def cost(ctx: object) -> ToolCost:
    """No LLM call: the scores are the answer."""
    return trained_models.no_cost(ctx)


def graph_signal(episode: Episode) -> Fetched:
    """GraphSignal: LightGCN's scores of the candidates, no model asked."""
    return trained_models.trained_signal(episode, MODELS, "graph propagation")
