"""`recgraph chainrec trajectories|train|export`: ChainRec's offline planner stage.

- `trajectories`: scored tool chains on training tasks (users' validation interactions), resumable;
- `train [--sft-only]`: SFT then DPO of the learned planner on them (generating them when missing),
  a versioned checkpoint with curves and the held-out planner comparison;
- `export --format sft|dpo`: the same trajectories as TRL JSONL, plus README.md with the recipe.
All three take the same trajectory options, so they find each other's files.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from recgraph.commands import console, progress_bar
from recgraph.options import add_dataset_options
from state.chainrec.context import ChainRecContext


def _trajectory_options(parser: argparse.ArgumentParser) -> None:
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
        "--lam",
        type=float,
        default=ChainRecContext.chainrec_reward_lambda,
        help="lambda of R = AvgHR@{1,3,5} - lambda*|tau|",
    )


def add_actions(actions: argparse._SubParsersAction) -> None:
    """Add `trajectories`, `train` and `export` to `recgraph chainrec`."""
    trajectories = actions.add_parser("trajectories", help="score tool chains on training tasks (resumable)")
    _trajectory_options(trajectories)
    trajectories.add_argument(
        "--out", default="", help="folder of trajectories.jsonl (default: the dataset's cache)"
    )
    trajectories.set_defaults(handler=run_trajectories)

    train = actions.add_parser(
        "train", help="train the learned planner: SFT then DPO, a versioned checkpoint"
    )
    _trajectory_options(train)
    train.add_argument("--sft-only", action="store_true", help="stop after SFT (Eq. 10)")
    train.add_argument(
        "--beta", type=float, default=ChainRecContext.chainrec_dpo_beta, help="DPO beta (Eq. 11)"
    )
    train.add_argument(
        "--out", default="", help="root folder of trajectories and checkpoints (default: the dataset's cache)"
    )
    train.set_defaults(handler=run_train)

    export = actions.add_parser("export", help="write the trajectories as TRL SFT or DPO JSONL")
    _trajectory_options(export)
    export.add_argument("--format", required=True, choices=["sft", "dpo"], help="TRL dataset format")
    export.add_argument("--pairs-per-task", type=int, default=4, help="dpo: rejected chains per task")
    export.add_argument("--out", default="", help="output folder (default: beside the trajectories)")
    export.set_defaults(handler=run_export)


def _config(args: argparse.Namespace, context: ChainRecContext) -> Any:
    from agents.chainrec.offline.training_tasks import config_from
    from world.errors import RecgraphError

    for name in ("users", "candidates", "chain_cap", "max_steps"):
        if getattr(args, name) < (2 if name == "candidates" else 1):
            raise RecgraphError(f"--{name.replace('_', '-')} is too small: {getattr(args, name)}")
    ctx = replace(context, chainrec_max_steps=args.max_steps, chainrec_reward_lambda=args.lam)
    return config_from(ctx, args.scenario, args.users, args.candidates, args.seed, args.chain_cap), ctx


def _with_bar(label: str) -> Any:
    bar = progress_bar()
    tasks: dict[str, Any] = {}

    def update(phase: str, done: int, total: int) -> None:
        if phase not in tasks:
            tasks[phase] = bar.add_task(f"{label} {phase}", total=total)
        bar.update(tasks[phase], completed=done, total=total)

    return bar, update


def run_trajectories(args: argparse.Namespace) -> int:
    """`recgraph chainrec trajectories`."""
    from agents.backends import describe_backend
    from agents.chainrec.offline.pipeline import make_trajectories
    from recgraph.llm_session import llm_session

    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = _config(args, context)
        bar, update = _with_bar("chainrec")
        with bar:
            if args.out:
                run = _to_folder(config, ctx, Path(args.out), update)
            else:
                run = make_trajectories(config, ctx, None, update)
    console.print(f"backend: {describe_backend(args.llm)}")
    console.print(f"{run.tasks} training tasks ({run.new} new), {run.chains} chains scored → {run.path}")
    return 0


def _to_folder(config: Any, ctx: ChainRecContext, folder: Path, update: Any) -> Any:
    from agents.chainrec.offline.trajectories import generate
    from world.environment import get_environment

    return generate(
        get_environment(config.dataset), ctx, config, folder, lambda d, t: update("trajectories", d, t)
    )


def run_train(args: argparse.Namespace) -> int:
    """`recgraph chainrec train [--sft-only]`."""
    from agents.backends import describe_backend
    from agents.chainrec.offline.pipeline import ensure_checkpoint
    from agents.chainrec.offline.policy_train import TrainConfig
    from recgraph.llm_session import llm_session

    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = _config(args, context)
        bar, update = _with_bar("chainrec")
        with bar:
            trained = ensure_checkpoint(
                config,
                TrainConfig(beta=args.beta, seed=args.seed),
                ctx,
                Path(args.out) if args.out else None,
                args.sft_only,
                update,
            )
    console.print(f"backend: {describe_backend(args.llm)}")
    console.print(
        f"trajectories: {trained.trajectories.tasks} tasks, {trained.trajectories.chains} chains "
        f"→ {trained.trajectories.path}"
    )
    verb = "reused" if trained.reused else "trained"
    console.print(f"checkpoint ({verb}): {trained.folder}  (curves.png, curves.json, evaluation.json)")
    console.print(f"data: {trained.data}")
    print_comparison(trained.evaluation)
    return 0


def print_comparison(evaluation: dict[str, Any]) -> None:
    """The held-out planner comparison as a table."""
    from rich.table import Table

    table = Table(
        title=f"held-out training tasks: {evaluation['heldout_tasks']} "
        f"(best fixed chain: {evaluation['best_fixed_chain']})"
    )
    columns = ("tasks", "reward", "avg_hr", "steps", "tokens")
    for column in ("planner", *columns):
        table.add_column(column)
    for name, figures in evaluation["planners"].items():
        table.add_row(name, *(str(figures.get(k, "–")) for k in columns))
    console.print(table)


def run_export(args: argparse.Namespace) -> int:
    """`recgraph chainrec export --format sft|dpo`."""
    from agents.chainrec.offline.export import README_SNIPPET, dpo_rows, sft_rows, write_jsonl
    from agents.chainrec.offline.pipeline import make_trajectories
    from agents.chainrec.offline.trajectories import read_rows
    from recgraph.llm_session import llm_session

    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = _config(args, context)
        bar, update = _with_bar("chainrec")
        with bar:
            run = make_trajectories(config, ctx, None, update)
    rows = read_rows(run.path)
    out = Path(args.out) if args.out else run.path.parent / "export"
    out.mkdir(parents=True, exist_ok=True)
    if args.format == "sft":
        count = write_jsonl(out / "sft.jsonl", sft_rows(rows, config.max_steps))
        what = f"{count} SFT rows (prompt/completion)"
    else:
        count = write_jsonl(
            out / "dpo.jsonl", dpo_rows(rows, config.max_steps, args.pairs_per_task, args.seed)
        )
        what = f"{count} DPO pairs (prompt/chosen/rejected)"
    (out / "README.md").write_text(README_SNIPPET, encoding="utf-8")
    console.print(
        f"{what} from {len(rows)} tasks → {out / (args.format + '.jsonl')} (recipe: {out / 'README.md'})"
    )
    return 0
