"""The router's learned planner: trajectories over the router's catalog in ChainRec's training world,
then SFT and DPO over its 17 actions, as the `prepare` step of `router_learned` and
`router_learned_no_cost` (graphs/router/prepare.py calls `train_for_bench` after the
prerequisites); a later run of the same protocol reuses the checkpoint.

Trajectories (agents/chainrec/offline/trajectories.py with the router's `RowLibrary`): training tasks
are users' validation interactions in the training world (every test interaction removed), the tools'
heuristic answers computed once per (task, tool), the fusion once per tool set, chains enumerated up
to `chainrec_chain_cap` else a seeded sample of that many. Each row records every tool's *planned*
tokens (`router_costs`), so R(τ) = AvgHR@{1,3,5} − `chainrec_reward_lambda`·|τ| −
`router_cost_lambda`·tokens(τ) is the reward bench scores the router with.

What the method tools read there: MemoryNeighbourhood reads the training world's own default MemRec
graph (`memrec_memory=""`: seeded from the training world's interactions, so no user memory names a
validation target; the bench run's graph is never read), IntentEvidence and CollaborativeSignal the
training world itself, SequentialSignal and GraphSignal the training world's own SASRec, GRU4Rec and
LightGCN (`training_world_models`: the bench run's learned the training tasks' targets),
RecencyRanking the training world's own history and item vectors. PatternMemories and AgentMemories
are masked (`MASKED`): the bench pool and the bench AgentCF memories are trained on the bench world
(its windows and replayed interactions include the validation items, the training targets), and
neither can be rebuilt for the renamed training world cheaply (a pool costs minutes of training;
AgentCF's training graph reads its world by dataset name). The reason is in every row, config.json
and evaluation.json, and the learned router never picks them.

Checkpoints live in the router catalog's own folder (`catalog_root`), keyed by the trajectory config
(cost λ included), the knobs that change the tools' answers or planned tokens, and the training
config, so ChainRec's and the router's never collide.
"""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from agents.chainrec.offline.fusion_fit import FIT_VERSION
from agents.chainrec.offline.pipeline import (
    MIN_TRAIN_TASKS,
    SUPPLEMENT,
    HeldOut,
    Trained,
    digest,
    train_checkpoint,
)
from agents.chainrec.offline.policy_train import TrainConfig
from agents.chainrec.offline.row_library import RowLibrary
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import TrajectoryConfig
from agents.chainrec.offline.trajectories import TrajectoryRun, existing_run, generate
from agents.chainrec.online.catalog import evidence_tools
from agents.chainrec.online.learned_catalog import catalog_root
from agents.chainrec.online.library_file import library_key, library_of
from agents.chainrec.online.policy import ActionSpace, mark_latest
from agents.router.catalog import fetch_for, router_catalog, router_costs, unavailable_tools
from agents.router.method_tools import graph_signal, sequential_signal
from agents.router.method_tools.agent_memories import NAME as AGENT_MEMORIES
from agents.router.method_tools.pattern_memories import NAME as PATTERN_MEMORIES
from agents.router.method_tools.trained_models import train_models
from agents.router.rules import RouterRulePlanner
from graphs.chainrec.learned import phase_progress, train_config, training_summary
from graphs.chainrec.learned import trajectory_config as chainrec_trajectory_config
from graphs.hooks import Prepared, PrepareRequest, ProgressCallback
from state.router.context import RouterContext
from world.environment import get_environment

MASKED = {
    PATTERN_MEMORIES: (
        "masked in training: the bench AMEM4Rec pool is trained on windows that hold the validation "
        "items (the training targets) and is refused in the renamed training world; a pool for the "
        "training world costs minutes of training"
    ),
    AGENT_MEMORIES: (
        "masked in training: the bench run's AgentCF memories replay its users' training "
        "interactions, which hold the training tasks' targets; AgentCF's training graph reads its "
        "world by dataset name, so it cannot train memories for the unnamed training world"
    ),
}
"""Tools the router's trajectories leave out, with why (the learned router never picks them)."""
TRAINED_TOOLS = (sequential_signal, graph_signal)
"""Method tools that read a trained baseline: in the training world, its own copy of the model."""
TOOL_KNOBS = (
    "chainrec_", "memrec_", "arag_", "router_collaborative", "router_sequential", "itemknn_", "bpr_",
    "embedding_", "sasrec_", "gru4rec_", "lightgcn_", "llmrank_",
)  # fmt: skip
"""Prefixes of the knobs that change the tools' heuristic answers, the fusion or planned tokens
(keyed into the trajectories and the checkpoint)."""
RUN_KNOBS = (
    "memrec_memory", "agentcf_memory", "chainrec_checkpoint", "chainrec_planner", "chainrec_policy_stage",
)  # fmt: skip
"""Knobs left out of the key: the run's own files and planner (training reads neither)."""
PLANNER_KNOBS = ("chainrec_planner_state", "chainrec_dpo_beta")
"""Knobs only the planner's training reads (keyed into the checkpoint, not the trajectories): a row
records each step's memory entries and the task facts, and either state vector is computed from them
(policy_data.StateTable), so router_learned_scenario reuses router_learned's trajectories."""


def trajectory_config(context: RouterContext, protocol: dict[str, Any], scenario: str) -> TrajectoryConfig:
    """The router's trajectories for a run: ChainRec's (dataset, scenario, candidates, seed, budget,
    task count, chain cap, step λ) plus the cost λ; always the heuristic backend."""
    chainrec = chainrec_trajectory_config(context, protocol, scenario)
    return replace(chainrec, cost_lam=context.router_cost_lambda, llm="heuristic")


def training_context(context: RouterContext) -> RouterContext:
    """The knobs the trajectories run with: the heuristic backend and the training world's own
    MemRec graph (`memrec_memory=""`), never the bench run's."""
    return replace(context, llm="heuristic", rec_model="", mem_model="", planner_model="", memrec_memory="")


def training_world_model_names(context: RouterContext) -> list[str]:
    """The trained baselines the trained tools of the run's catalog read (SASRec, GRU4Rec, LightGCN)."""
    names = {spec.name for spec in router_catalog(context)}
    models = [m for module in TRAINED_TOOLS if module.NAME in names for m in module.model_names(context)]
    return list(dict.fromkeys(models))


def training_world_models(context: RouterContext) -> dict[str, dict[str, Any]]:
    """The training world's own SASRec, GRU4Rec and LightGCN for the trained tools of the run's
    catalog (trained once, then read from the training world's cache): the bench run's models learned
    every training interaction, the training tasks' targets included, so their scores there would
    overrate SequentialSignal and GraphSignal; these learned only what precedes the targets."""
    models = training_world_model_names(context)
    if not models:
        return {}
    train_env = training_environment(get_environment(context.dataset))
    return train_models(train_env, context, models)


def row_library(context: RouterContext, candidates: int) -> RowLibrary:
    """The router's tools as trajectories run them: planned tokens per call at `candidates`
    candidates, `MASKED` and whatever the training world cannot run left out."""
    train_env = training_environment(get_environment(context.dataset))
    catalog = router_catalog(context)
    training_world_models(context)
    masked = {**unavailable_tools(train_env, context, catalog), **MASKED}
    costs = router_costs(context)
    planned = {tool: costs[tool].tokens(candidates) for tool in evidence_tools(catalog) if tool in costs}
    return RowLibrary(catalog, fetch_for(catalog), planned, masked, rank_all=True)


def tool_knobs(context: RouterContext) -> dict[str, Any]:
    """The knobs of `TOOL_KNOBS` (JSON-ready), the run's own files left out."""
    knobs = {
        k: v
        for k, v in sorted(asdict(context).items())
        if k.startswith(TOOL_KNOBS) and k not in RUN_KNOBS and isinstance(v, str | int | float | bool)
    }
    library = knobs.pop("chainrec_library", "")
    if library:  # keyed by the cards, not the path; the shipped library leaves the key as it was
        knobs["chainrec_library"] = library_key(library_of(context))
    return knobs


def ensure_router_checkpoint(
    context: RouterContext,
    config: TrajectoryConfig,
    train: TrainConfig,
    on_progress: ProgressCallback | None = None,
    root: Path | None = None,
) -> Trained:
    """The router checkpoint for (config, knobs, train): reused when complete, else trajectories
    (resumed when present) then SFT and DPO."""
    ctx = training_context(context)
    library = row_library(ctx, config.candidates)
    base = root or catalog_root(config.dataset, library.catalog)
    payload = {"trajectories": config.as_dict(), "knobs": tool_knobs(ctx), "masked": dict(library.masked)}
    keyed = {
        **payload,
        "train": train.as_dict(),
        "supplement_below": MIN_TRAIN_TASKS,
        "fusion_fit": FIT_VERSION,
    }
    folder = base / f"{config.scenario}-{digest(keyed)}"
    # One trajectory set for every cost weight (training re-scores the rows: rollout.with_cost), so
    # router_learned_no_cost reuses router_learned's trajectories.
    unweighted = replace(config, cost_lam=0.0)

    rows_knobs = {k: v for k, v in payload["knobs"].items() if k not in PLANNER_KNOBS}

    def run_folder(scenario: str) -> Path:
        trajectories = replace(unweighted, scenario=scenario).as_dict()
        return base / f"trajectories-{digest({**payload, 'knobs': rows_knobs, 'trajectories': trajectories})}"

    if (folder / "config.json").is_file():
        mark_latest(base, config.scenario, folder, train.state)
        saved = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        evaluation = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
        reused = existing_run(run_folder(config.scenario), unweighted)
        return Trained(folder, True, reused, evaluation, saved.get("data", {}))
    hook = (lambda done, total: on_progress("trajectories", done, total)) if on_progress else None
    environment = get_environment(config.dataset)
    run: TrajectoryRun = generate(environment, ctx, unweighted, run_folder(config.scenario), hook, library)
    notes = {"masked_tools": dict(library.masked), "tool_knobs": payload["knobs"]}
    held_out = HeldOut(RouterRulePlanner(), len(evidence_tools(library.catalog)), notes)
    space = ActionSpace(library.catalog)
    classic = replace(unweighted, scenario=SUPPLEMENT)

    def classic_run() -> TrajectoryRun:
        return generate(environment, ctx, classic, run_folder(SUPPLEMENT), hook, library)

    return train_checkpoint(run, config, train, folder, False, on_progress, space, held_out, classic_run, ctx)


def train_for_bench(request: PrepareRequest, context: RouterContext) -> Prepared:
    """The learned router's training step (`context`: the run's, its prerequisites prepared):
    progress as "<method> · trajectories|sft|dpo"; metrics.json gets `planner_training`."""
    config = trajectory_config(context, dict(request.protocol), request.scenario)
    train = train_config(context, config.seed)
    trained = ensure_router_checkpoint(context, config, train, phase_progress(request))
    summary = {
        **training_summary(trained, config, context.chainrec_policy_stage),
        "cost_lambda": config.cost_lam,
        "masked_tools": trained.evaluation.get("masked_tools", {}),
    }
    return Prepared(replace(context, chainrec_checkpoint=str(trained.folder)), {"planner_training": summary})


def train_ahead(request: PrepareRequest) -> Prepared:
    """`prepare_ahead` hook of the learned routers: `train_for_bench` on the router's context before
    its prerequisites are prepared. Nothing it keys or reads comes from them (`RUN_KNOBS` leave the
    key, `training_context` drops the bench memory), so the full `prepare` finds the checkpoint."""
    return train_for_bench(request, request.context)  # type: ignore[arg-type]
