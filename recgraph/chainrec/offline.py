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

from recgraph.options import add_dataset_options
from recgraph.terminal import console, progress_bar
from state.chainrec.context import ChainRecContext
from world.errors import RecgraphError


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
    _trajectory_options(export)
    export.add_argument("--format", required=True, choices=["sft", "dpo"], help="TRL dataset format")
    export.add_argument("--pairs-per-task", type=int, default=4, help="dpo: rejected chains per task")
    export.add_argument("--out", default="", help="output folder (default: beside the trajectories)")
    export.set_defaults(handler=run_export)


def _config(args: argparse.Namespace, context: ChainRecContext) -> Any:
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

    if args.library == "router":
        return _train_router(args)
    if args.cost_lam is not None:
        raise RecgraphError("--cost-lam weighs the router's planned tokens: use it with --library router")
    with llm_session(args, schema=ChainRecContext) as (context, _):
        config, ctx = _config(args, context)
        bar, update = _with_bar("chainrec")
        with bar:
            trained = ensure_checkpoint(
                config,
                TrainConfig(beta=args.beta, seed=args.seed, fusion=args.fusion, state=args.state),
                ctx,
                Path(args.out) if args.out else None,
                args.sft_only,
                update,
            )
    console.print(f"backend: {describe_backend(args.llm)}")
    _print_trained(trained)
    return 0


def _train_router(args: argparse.Namespace) -> int:
    """`recgraph chainrec train --library router`: the learned router's checkpoint, the one
    `router_learned` (or, with `--cost-lam 0`, `router_learned_no_cost`) finds for the same protocol."""
    from graphs.chainrec.learned import train_config
    from graphs.router.learned import ensure_router_checkpoint
    from recgraph.llm_session import llm_session
    from state.router.context import RouterContext

    if (args.llm or "heuristic") != "heuristic":
        raise RecgraphError(
            f"--library router trains on the tools' heuristic answers only (got --llm {args.llm}): "
            "enumerated chains would cost thousands of model calls per task"
        )
    with llm_session(args, schema=RouterContext) as (context, _):
        config, ctx = _config(args, context)
        cost = ctx.router_cost_lambda if args.cost_lam is None else args.cost_lam
        config = replace(config, cost_lam=cost, llm="heuristic")
        knobs = train_config(
            replace(ctx, chainrec_dpo_beta=args.beta, chainrec_planner_state=args.state), config.seed
        )
        train = replace(knobs, fusion=args.fusion)
        root = Path(args.out) if args.out else None
        bar, update = _with_bar("router")
        with bar:
            trained = ensure_router_checkpoint(ctx, config, train, update, root)
    console.print(f"backend: heuristic tool answers; cost lambda {cost}")
    _print_trained(trained)
    return 0


def _print_trained(trained: Any) -> None:
    console.print(
        f"trajectories: {trained.trajectories.tasks} tasks, {trained.trajectories.chains} chains "
        f"→ {trained.trajectories.path}"
    )
    verb = "reused" if trained.reused else "trained"
    console.print(f"checkpoint ({verb}): {trained.folder}  (curves.png, curves.json, evaluation.json)")
    from agents.chainrec.offline.routing_signal import describe

    counts = {k: v for k, v in trained.data.items() if k != "routing_signal"}
    console.print(f"data: {counts}")
    if trained.data.get("routing_signal"):
        console.print(describe(trained.data["routing_signal"]))
    if trained.evaluation.get("fusion"):
        from agents.chainrec.offline.fusion_fit import describe as describe_fusion

        console.print(describe_fusion(trained.evaluation["fusion"]))
    print_comparison(trained.evaluation)


def print_comparison(evaluation: dict[str, Any]) -> None:
    """The held-out planner comparison as a table, each planner's AvgHR paired with the best fixed
    chain's over the same held-out tasks (`paired_with_best_fixed`)."""
    from rich.table import Table

    from bench.stats import MARKERS

    table = Table(
        title=f"held-out training tasks: {evaluation['heldout_tasks']} "
        f"(best fixed chain: {evaluation['best_fixed_chain']})"
    )
    columns = ("tasks", "reward", "avg_hr", "steps", "tokens")
    for column in ("planner", *columns, "Δavg_hr vs best fixed", "p (Holm)"):
        table.add_column(column)
    paired = paired_with_best_fixed(evaluation)
    for name, figures in evaluation["planners"].items():
        found = paired.get(name)
        versus = (
            ("–", "–")
            if found is None
            else (f"{found.difference:+.4f} {MARKERS[found.verdict]}", f"{found.p_holm:.3g}")
        )
        table.add_row(name, *(str(figures.get(k, "–")) for k in columns), *versus)
    console.print(table)
    console.print(
        "paired over the held-out tasks both planners can score: two-sided sign-flip test, Holm across "
        "the planners; ▲/▼ at adjusted p < 0.05, ≈ no detectable difference"
    )


def paired_with_best_fixed(evaluation: dict[str, Any]) -> dict[str, Any]:
    """planner -> its paired AvgHR comparison with `best_fixed` on the held-out tasks (bench.stats,
    Holm across the planners); empty for an evaluation without per-task figures (older checkpoints)."""
    from bench import stats

    per_task = evaluation.get("per_task") or {}
    base = per_task.get("best_fixed")
    if not base:
        return {}
    pairs = {}
    for name, values in per_task.items():
        if name == "best_fixed":
            continue
        both = [
            i for i, (a, b) in enumerate(zip(values, base, strict=True)) if a is not None and b is not None
        ]
        pairs[name] = (
            {str(i): {"avg_hr": values[i]} for i in both},
            {str(i): {"avg_hr": base[i]} for i in both},
        )
    return {name: row["avg_hr"] for name, row in stats.compare_all(pairs, ["avg_hr"]).items()}


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
