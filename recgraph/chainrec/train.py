"""`recgraph chainrec train [--sft-only] [--library router]`: the learned planner's (or router's)
checkpoint, and the held-out planner comparison it prints."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path
from typing import Any

from recgraph.chainrec.trajectory_options import progress_updates, training_config
from recgraph.terminal import console
from state.chainrec.context import ChainRecContext
from world.errors import RecgraphError


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
        config, ctx = training_config(args, context)
        bar, update = progress_updates("chainrec")
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
        config, ctx = training_config(args, context)
        cost = ctx.router_cost_lambda if args.cost_lam is None else args.cost_lam
        config = replace(config, cost_lam=cost, llm="heuristic")
        knobs = train_config(
            replace(ctx, chainrec_dpo_beta=args.beta, chainrec_planner_state=args.state), config.seed
        )
        train = replace(knobs, fusion=args.fusion)
        root = Path(args.out) if args.out else None
        bar, update = progress_updates("router")
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

    from bench.stats.significance import MARKERS

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
    print_chains_by_scenario(evaluation.get("chains_by_scenario") or {})


def print_chains_by_scenario(
    found: dict[str, Any], planners: tuple[str, ...] = ("learned", "oracle")
) -> None:
    """Which tool sets the learned planner chose per scenario and which would have won (the oracle):
    each set with its share of the scenario's held-out tasks and its mean AvgHR."""
    from rich.table import Table

    if not found:
        return
    table = Table(title="chains per scenario on the held-out tasks (top tool sets: share, avg_hr)")
    for column in ("scenario", *planners):
        table.add_column(column)
    for scenario, by_planner in found.items():
        cells = [
            "\n".join(
                f"{entry['tools']}: {entry['share']:.0%}, "
                + ("–" if entry["avg_hr"] is None else f"{entry['avg_hr']:.3f}")
                for entry in by_planner.get(name, [])
            )
            or "–"
            for name in planners
        ]
        table.add_row(scenario, *cells)
    console.print(table)


def paired_with_best_fixed(evaluation: dict[str, Any]) -> dict[str, Any]:
    """planner -> its paired AvgHR comparison with `best_fixed` on the held-out tasks (bench.stats,
    Holm across the planners); empty for an evaluation without per-task figures (older checkpoints)."""
    from bench.stats import significance as stats

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
