"""ChainRec's learned planner in the harness: the `prepare` hook of `chainrec_learned` and
`chainrec_sft` finds the planner checkpoint for the dataset and the run's protocol (scenario,
candidates, seed, backend) and the training knobs — or, when there is none, generates the
trajectories on training tasks (users' validation interactions, never a test target) and trains
SFT then DPO, reporting progress — and points the method's context at it. Both methods share one
checkpoint (it holds the SFT and the DPO weights); a later run reuses it. Checkpoints live in the
dataset's cache (agents/chainrec/offline/pipeline.py), so every run of the same protocol finds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from agents.chainrec.offline.pipeline import Trained, checkpoint_folder, checkpoint_root, ensure_checkpoint
from agents.chainrec.offline.policy_train import TrainConfig
from agents.chainrec.offline.training_tasks import TrajectoryConfig
from agents.chainrec.online.library_file import library_key, library_of
from agents.chainrec.online.policy import planner_dataset, planner_key
from graphs.hooks import Prepared, PrepareRequest
from state.chainrec.context import ChainRecContext
from state.context import backend_for


def trajectory_config(context: ChainRecContext, protocol: dict[str, Any], scenario: str) -> TrajectoryConfig:
    """The trajectories a run's planner trains on: the run's dataset (on AgentRecBench's release
    layout, with `chainrec_planner_scope` = "run", the release's training corpus:
    `policy.planner_dataset`), every scenario (`RUN_SCOPE`) or, in the per-scenario ablation, the
    run's, its candidates, seed and backend, and the method's budget, λ, task count and chain cap."""
    scope = context.chainrec_planner_scope
    return TrajectoryConfig(
        dataset=planner_dataset(context.dataset, scope),
        scenario=planner_key(scenario, scope),
        tasks=context.chainrec_train_tasks,
        candidates=int(protocol.get("candidates", 20)),
        seed=int(protocol.get("seed", 0)),
        chain_cap=context.chainrec_chain_cap,
        max_steps=context.chainrec_max_steps,
        lam=context.chainrec_reward_lambda,
        llm=backend_for(context, "rec"),
        library=library_key(library_of(context)),
    )


def train_config(context: ChainRecContext, seed: int) -> TrainConfig:
    """The training config of a run (β and the planner state from the context)."""
    return TrainConfig(beta=context.chainrec_dpo_beta, seed=seed, state=context.chainrec_planner_state)


def train_for_bench(request: PrepareRequest) -> Prepared:
    """`prepare` hook: the checkpoint (reused, or trajectories + SFT + DPO now), progress as
    "<method> · trajectories|sft|dpo"; metrics.json gets `planner_training` (checkpoint, reuse,
    counts and the held-out planner comparison)."""
    context = request.context
    config = trajectory_config(context, dict(request.protocol), request.scenario)
    train = train_config(context, config.seed)
    if config.llm != "heuristic" and not checkpoint_exists(config, train):
        # Enumerated chains cost thousands of tool calls per task: the automatic path never spends
        # them on an LLM. A checkpoint trained on LLM tool answers is made on purpose with
        # `recgraph chainrec train --llm ...`, and then found and used here.
        context = replace(context, llm="heuristic", rec_model="", mem_model="", planner_model="")
        config = replace(config, llm="heuristic")
    trained = ensure_checkpoint(config, train, context, on_progress=phase_progress(request))
    summary = training_summary(trained, config, context.chainrec_policy_stage)
    ranking_context = replace(request.context, chainrec_checkpoint=str(trained.folder))
    return Prepared(ranking_context, {"planner_training": summary})


def checkpoint_exists(config: TrajectoryConfig, train: TrainConfig) -> bool:
    """True when a complete checkpoint of exactly (config, train) is in the dataset's cache."""
    folder = checkpoint_folder(checkpoint_root(config.dataset), config, train, sft_only=False)
    if config.library:  # another library's checkpoints live in its catalog's folder
        return False
    return (folder / "config.json").is_file()


def phase_progress(request: PrepareRequest) -> Callable[[str, int, int], None] | None:
    """The training's progress rows, "<method> · trajectories|sft|dpo" (None without a display)."""
    progress = request.on_progress
    if progress is None:
        return None
    return lambda phase, done, total: progress(f"{request.method} · {phase}", done, total)


def training_summary(trained: Trained, config: TrajectoryConfig, stage: str) -> dict[str, Any]:
    """metrics.json's `planner_training`: the checkpoint, whether it was reused, the trajectories'
    counts and the held-out planner comparison."""
    kept = ("dpo_pairs", "expert_decisions", "heldout_tasks")
    return {
        "checkpoint": str(trained.folder),
        "stage": stage,
        "reused": trained.reused,
        "trajectory_backend": config.llm,
        "trajectory_tasks": trained.trajectories.tasks,
        "trajectory_chains": trained.trajectories.chains,
        **{k: v for k, v in trained.data.items() if k in kept},
        "heldout": trained.evaluation.get("planners", {}),
        "best_fixed_chain": trained.evaluation.get("best_fixed_chain"),
        "chains_by_scenario": trained.evaluation.get("chains_by_scenario", {}),
        "fusion": trained.evaluation.get("fusion"),
    }


def heuristic_training_notes(env: Any, contexts: Mapping[str, Any]) -> list[str]:
    """Run-header hook (recgraph/run_header.py): one line naming the learned-planner methods that run
    over an LLM backend but train their planner on the heuristic tools' trajectories (`train_for_bench`
    never spends an LLM on enumerated chains; the router's always train on heuristic answers)."""
    methods = [
        name
        for name, context in contexts.items()
        if getattr(context, "chainrec_planner", "") == "learned"
        and not getattr(context, "chainrec_checkpoint", "")
        and backend_for(context, "rec") != "heuristic"
    ]
    if not methods:
        return []
    return [
        f"{', '.join(methods)}: the planner is trained on trajectories of the heuristic tools and serves "
        "over the LLM's tools (a checkpoint made with `recgraph chainrec train --llm ...` is used instead "
        "when one exists for the protocol; the router's always train on heuristic answers)"
    ]
