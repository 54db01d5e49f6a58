"""`recgraph chainrec trajectories|train|export`: ChainRec's offline planner stage.

- `trajectories`: scored tool chains on training tasks (users' validation interactions), resumable;
- `train [--sft-only]`: SFT then DPO of the learned planner on them (generating them when missing),
  a versioned checkpoint with curves and the held-out planner comparison;
- `export --format sft|dpo`: the same trajectories as TRL JSONL, plus README.md with the recipe.
All three take the same trajectory options (trajectory_options.py), so they find each other's files;
`train` runs in train.py.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from recgraph.chainrec.train import run_train
from recgraph.chainrec.trajectory_options import add_trajectory_options, progress_updates, training_config
from recgraph.terminal import console
from state.chainrec.context import ChainRecContext


def add_actions(actions: argparse._SubParsersAction) -> None:
    """Add `trajectories`, `train` and `export` to `recgraph chainrec`."""
    trajectories = actions.add_parser("trajectories", help="score tool chains on training tasks (resumable)")
    add_trajectory_options(trajectories)
    trajectories.add_argument(
        "--out", default="", help="folder of trajectories.jsonl (default: the dataset's cache)"
    )
    trajectories.set_defaults(handler=run_trajectories)

    train = actions.add_parser(
        "train", help="train the learned planner: SFT then DPO, a versioned checkpoint"
    )
    add_trajectory_options(train)
    train.add_argument("--sft-only", action="store_true", help="stop after SFT (Eq. 10)")
    train.add_argument(
        "--beta", type=float, default=ChainRecContext.chainrec_dpo_beta, help="DPO beta (Eq. 11)"
    )
    train.add_argument(
        "--out", default="", help="root folder of trajectories and checkpoints (default: the dataset's cache)"
    )
    train.add_argument(
        "--fusion",
        choices=["auto", "learned", "context"],
        default="auto",
        help="CandidateRank's fusion weights: fitted on the training tasks and kept when they "
        "generalise (auto), always fitted (learned) or the named chainrec_weight_* knobs (context)",
    )
    train.add_argument(
        "--library",
        choices=["chainrec", "router"],
        default="chainrec",
        help="chainrec: ChainRec's tools (chainrec_learned); router: the extended library with the method "
        "tools (router_learned; heuristic tool answers, PatternMemories masked)",
    )
    train.add_argument(
        "--state",
        choices=["memory", "scenario"],
        default="memory",
        help="the planner's state: memory = (u, I_cand, M_t) as in Eq. 2 (chainrec_learned, router_learned); "
        "scenario = also the scenario tag and task facts no tool gathered (chainrec_learned_scenario, "
        "router_learned_scenario)",
    )
    train.add_argument(
        "--cost-lam",
        type=float,
        default=None,
        help="router: lambda_cost of R = AvgHR - lambda*|tau| - lambda_cost*tokens "
        "(default: router_cost_lambda, 0 for router_learned_no_cost)",
    )
    train.set_defaults(handler=run_train)

    export = actions.add_parser("export", help="write the trajectories as TRL SFT or DPO JSONL")
    add_trajectory_options(export)
    export.add_argument("--format", required=True, choices=["sft", "dpo"], help="TRL dataset format")
    export.add_argument("--pairs-per-task", type=int, default=4, help="dpo: rejected chains per task")
    export.add_argument("--out", default="", help="output folder (default: beside the trajectories)")
    export.set_defaults(handler=run_export)


def run_trajectories(args: argparse.Namespace) -> int:
    """`recgraph chainrec trajectories`."""
    from agents.backends import describe_backend
    from agents.chainrec.offline.pipeline import make_trajectories
    from recgraph.llm_session import llm_session

    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = training_config(args, context)
        bar, update = progress_updates("chainrec")
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


def run_export(args: argparse.Namespace) -> int:
    """`recgraph chainrec export --format sft|dpo`."""
    from agents.chainrec.offline.export import README_SNIPPET, dpo_rows, sft_rows, write_jsonl
    from agents.chainrec.offline.pipeline import make_trajectories
    from agents.chainrec.offline.trajectories import read_rows
    from recgraph.llm_session import llm_session

    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = training_config(args, context)
        bar, update = progress_updates("chainrec")
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
