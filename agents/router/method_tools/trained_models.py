"""What SequentialSignal and GraphSignal share: the trained baselines' models (SASRec, GRU4Rec,
LightGCN) as router evidence, their availability and the per-episode cold-start mask.

The models are the baselines' own (agents/baselines/fitted.py: `fitted_model`, one per process and
dataset, cached on disk), trained by the baselines' `prepare` step, which the router's `prepare` runs
(agents/router/catalog.py `PREREQUISITES`); a tool never trains one inside a ranking. Without a
trained model for the run's dataset and knobs the tool is unavailable, with the command that trains
it. In one episode a tool is masked when the model cannot score the user (no visible item has a
training interaction: the baselines' cold user) or any candidate (every candidate is cold). A cold
candidate among warm ones is scored after every warm one (the baselines' fallback) and named in the
tool's notes.

Each model's scores are rank-normalised over the candidates (percentile ranks, ties shared) and
averaged over the tool's models: each candidate's score in [0, 1]. No model is asked
(`needed=False`): the scores are the answer, at 0 LLM calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from agents.baselines.fitted import fitted_model, is_cold_user, is_trained, model_scores
from agents.baselines.trained import warm_mask, with_cold_fallback
from agents.chainrec.online.catalog import ToolCost
from agents.chainrec.online.evidence import percentile_ranks, title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.router.method_tools.support import knobs, ranked_evidence, visible_items
from state.baselines.context import BaselinesContext
from state.chainrec.schemas import ToolOutput
from world.environment import Environment

MODEL_NAMES = {"sasrec": "SASRec", "gru4rec": "GRU4Rec", "lightgcn": "LightGCN"}
"""Registry name -> how the tool's notes name the model."""
CONFIDENCE = 0.8
"""The answer's confidence (the scores are a trained model's, the user warm)."""


def missing_models(env: Environment, ctx: object, models: Sequence[str]) -> list[str]:
    """The models of `models` not trained yet for `env` under `ctx`'s knobs (neither in this process
    nor in the dataset's cache)."""
    settings = knobs(ctx, BaselinesContext)  # type: ignore[arg-type]
    return [name for name in models if not is_trained(env, settings, name)]


def unavailable_reason(env: Environment, ctx: object, models: Sequence[str]) -> str | None:
    """Why the tool cannot run on this dataset (a model not trained, and the command that trains it),
    or None."""
    missing = missing_models(env, ctx, models)
    if not missing:
        return None
    names = ", ".join(MODEL_NAMES[m] for m in missing)
    return (
        f"{names} not trained for {env.dataset.name} with these knobs: their baselines' prepare step "
        f"trains them (`recgraph bench --methods {','.join(missing)}`, or the router's own prepare)"
    )


def cold_reason(env: Environment, history: Sequence[str], candidates: Sequence[str]) -> str | None:
    """Why the models cannot score this episode (a cold user, or every candidate cold), or None."""
    if is_cold_user(env, history):
        return "cold user: no visible item has a training interaction, the models cannot score them"
    if candidates and not warm_mask(env, candidates).any():
        return "every candidate is cold: none has a training interaction the models learned"
    return None


def episode_reason(env: Environment, episode: Mapping[str, Any]) -> str | None:
    """`cold_reason` for an episode's state (its visible history and candidates)."""
    return cold_reason(env, list(episode.get("history") or ()), list(episode.get("candidates") or ()))


def train_models(env: Environment, ctx: object, models: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Train `models` on `env` (or read them from its cache), as their baselines' prepare step does;
    each model's training figures. For a world no baseline run trains on (the router's training
    world: its planner's tasks need models that never saw their targets)."""
    settings = knobs(ctx, BaselinesContext)  # type: ignore[arg-type]
    return {name: dict(fitted_model(env, settings, name).info) for name in models}


def no_cost(ctx: object) -> ToolCost:
    """No LLM call: the scores are the answer."""
    return ToolCost(0, 0)


def trained_signal(episode: Episode, models: Sequence[str], words: str) -> Fetched:
    """The models' rank-normalised scores of every candidate, averaged; `words` says what they read."""
    env, scope = episode.env, episode.scope
    history = visible_items(episode)
    candidates = list(episode.candidates)
    records = fetch_items(episode, candidates)
    settings = knobs(episode.ctx, BaselinesContext)
    user, scenario = scope.user_id, scope.scenario
    raw = [model_scores(env, settings, m, user, history, candidates, scenario) for m in models]
    raw = [with_cold_fallback(env, candidates, values) for values in raw]
    scores = np.mean([percentile_ranks(values) for values in raw], axis=0)
    cold = [c for c, warm in zip(candidates, warm_mask(env, candidates), strict=True) if not warm]
    basis = "+".join(MODEL_NAMES[m] for m in models)
    items, best, text = ranked_evidence(records, scores, basis, basis)
    facets = [
        facet("model_basis", f"{basis} over {len(history)} visible interactions ({words})"),
        facet("strongest_candidates", title_list(best, 3)),
        facet("cold_candidates", f"{len(cold)} of {len(records)} unseen in training, ranked last"),
    ]
    summary = f"{basis} rank highest: {title_list(best, 3)}."
    output = ToolOutput(facets=facets, confidence=CONFIDENCE, summary=summary, items=items)
    stats = {"history_items": float(len(history)), "cold_candidates": float(len(cold))}
    notes = (f"{len(cold)} cold candidates ranked last",) if cold else ()
    return Fetched(text, output, stats, tuple(candidates), needed=False, notes=notes)
