"""The options ChainRec's offline commands share (`trajectories`, `train`, `export`), the training
config they name, and the progress bar they draw."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from recgraph.options import add_dataset_options
from recgraph.terminal import progress_bar
from state.chainrec.context import ChainRecContext
from world.errors import RecgraphError


def add_trajectory_options(parser: argparse.ArgumentParser) -> None:
    """The options `trajectories`, `train` and `export` share, so they find each other's files."""
    add_dataset_options(parser)
    parser.add_argument(
        "--users", type=int, default=ChainRecContext.chainrec_train_tasks, help="training tasks (users)"
    )
    parser.add_argument(
        "--candidates", type=int, default=20, help="N per task: validation target + N-1 negatives"
    )
    parser.add_argument(
        "--chain-cap",
        type=int,
        default=ChainRecContext.chainrec_chain_cap,
        help="enumerate up to this many chains per task, else sample",
    )
    parser.add_argument(
        "--max-steps", type=int, default=ChainRecContext.chainrec_max_steps, help="T_max: tools per chain"
    )
    parser.add_argument(
        "--scope",
        choices=["run", "scenario"],
        default=ChainRecContext.chainrec_planner_scope,
        help="run: one planner over every scenario (tasks of all five; the paper's); scenario: the "
        "--scenario's tasks only (the per-scenario ablation)",
    )
    parser.add_argument(
        "--lam",
        type=float,
        default=ChainRecContext.chainrec_reward_lambda,
        help="lambda of R = AvgHR@{1,3,5} - lambda*|tau|",
    )


def training_config(args: argparse.Namespace, context: ChainRecContext) -> Any:
    """The training tasks' config the trajectory options name, and the context they run under."""
    from agents.chainrec.offline.training_tasks import config_from

    for name in ("users", "candidates", "chain_cap", "max_steps"):
        if getattr(args, name) < (2 if name == "candidates" else 1):
            raise RecgraphError(f"--{name.replace('_', '-')} is too small: {getattr(args, name)}")
    from agents.chainrec.online.policy import planner_dataset, planner_key

    ctx = replace(
        context,
        chainrec_max_steps=args.max_steps,
        chainrec_reward_lambda=args.lam,
        chainrec_planner_scope=args.scope,
        dataset=planner_dataset(context.dataset, args.scope),
    )
    scenario = planner_key(args.scenario, args.scope)
    return config_from(ctx, scenario, args.users, args.candidates, args.seed, args.chain_cap), ctx


def progress_updates(label: str) -> Any:
    """A progress bar and its `update(phase, done, total)` callback, one row per phase."""
    bar = progress_bar()
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(f"{label} {phase}", total=total)
        bar.update(tasks[phase], completed=done, total=total)

    return bar, update
