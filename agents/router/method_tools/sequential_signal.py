"""SequentialSignal (a router method tool): SASRec's and GRU4Rec's scores of the candidates, from
the models the baselines room trains and caches (agents/router/method_tools/trained_models.py).

The two read the order of the user's visible history, which no other tool models: what the user
did last predicts what comes next. Both by default; `router_sequential` names fewer. No LLM call.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.tool_agent import Episode, Fetched
from agents.router.method_tools import trained_models
from world.environment import Environment
from world.errors import RecgraphError

NAME = "SequentialSignal"
MODELS = ("sasrec", "gru4rec")
"""The trained sequential baselines the tool may read (`router_sequential` picks among them)."""
SPEC = ToolSpec(
    NAME,
    "sequential_signal",
    "item",
    "Trained sequential models (SASRec, GRU4Rec) over every candidate: which items follow the order "
    "of the user's visible history, as learned from every user's training sequences.",
    "get_user for the visible history in order, get_item for every candidate; the trained models",
    "one entry per candidate (sequential score 0-1, rank-normalised); no LLM call",
    weight_field="chainrec_weight_sequential",
)
"""What the planner sees of SequentialSignal."""
PREREQUISITE: tuple[str, ...] = MODELS
"""The registry methods whose `prepare` hooks train what it reads."""
BLOCKING = True
"""The first fetch of a process reads the models' weights from disk: off the event loop."""


def model_names(ctx: object) -> tuple[str, ...]:
    """The models `router_sequential` names (comma-separated), refusing an unknown one."""
    text = str(getattr(ctx, "router_sequential", ",".join(MODELS)))
    names = tuple(dict.fromkeys(p.strip() for p in text.split(",") if p.strip())) or MODELS
    if unknown := [n for n in names if n not in MODELS]:
        raise RecgraphError(f"unknown router_sequential model {unknown[0]!r}; use {', '.join(MODELS)}")
    return names


def unavailable(env: Environment, ctx: object) -> str | None:
    """Why SequentialSignal cannot run on this dataset (a model not trained), or None."""
    return trained_models.unavailable_reason(env, ctx, model_names(ctx))


def episode_unavailable(env: Environment, ctx: object, episode: Mapping[str, Any]) -> str | None:
    """Why it cannot score this episode (a cold user, every candidate cold), or None."""
    return trained_models.episode_reason(env, episode)


def cost(ctx: object) -> ToolCost:
    """No LLM call: the scores are the answer."""
    return trained_models.no_cost(ctx)


def sequential_signal(episode: Episode) -> Fetched:
    """SequentialSignal: the trained sequential models' scores of the candidates, no model asked."""
    return trained_models.trained_signal(episode, model_names(episode.ctx), "in order")
