"""`recgraph amem4rec train`: train an AMEM4Rec pool (planned, bounded concurrency, progress bar,
resumable, deterministic, with a summary at the end).
`recgraph amem4rec pool show ID`: one memory of a pool with its lineage."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from rich.markup import escape
from rich.table import Table

from recgraph.options import add_dataset_options
from recgraph.terminal import console, progress_bar
from state.amem4rec.context import Amem4RecContext


def register(commands: argparse._SubParsersAction) -> None:
    """Add `recgraph amem4rec train|pool` (the registry's CLI hook for AMEM4Rec methods)."""
    parser = commands.add_parser(
        "amem4rec", help="AMEM4Rec tools: `amem4rec train` builds the memory pool; `amem4rec pool show ID`"
    )
    actions = parser.add_subparsers(dest="amem4rec_action", required=True)
    train = actions.add_parser("train", help="train the pool on users' training windows (resumable)")
    train.add_argument("--users", type=int, default=None, help="only the first N users (by id) with a window")
    train.add_argument(
        "--windows-per-user", type=int, default=None, help="latest windows per user (default 10; 0: all)"
    )
    train.add_argument(
        "--round-windows",
        type=int,
        default=None,
        help="windows per snapshot round (default 16; 1: strict order)",
    )
    train.add_argument("--concurrency", type=int, default=8, help="LLM calls in flight")
    train.add_argument("--pool", default="", help="pool folder (default: the dataset's default pool)")
    add_dataset_options(train)
    train.set_defaults(handler=train_command)
    pool = actions.add_parser("pool", help="inspect a pool: `pool show ID`")
    pool.add_argument("what", choices=["show"], help="show: one memory and every version it went through")
    pool.add_argument("memory_id", help="the memory's id (e.g. m-1-12)")
    pool.add_argument("--pool", default="", help="pool folder (default: the dataset's default pool)")
    add_dataset_options(pool)
    pool.set_defaults(handler=show_command)


def training_users(env: Any, count: int | None, window: int) -> list[str]:
    """Users with at least one training window, in id order (the first `count` when given)."""
    from agents.amem4rec.windows import training_items
    from world.data import natural_key
    from world.errors import RecgraphError

    users = [u for u in sorted(env.cases, key=natural_key) if len(training_items(env, u)) >= window]
    if count is not None:
        if count < 1:
            raise RecgraphError(f"--users must be at least 1, got {count}")
        users = users[:count]
    return users


def train_command(args: argparse.Namespace) -> int:
    """Plan, train with a progress bar, and print the pool summary."""
    from agents.amem4rec.retrieval import training_pool
    from agents.amem4rec.windows import plan_windows
    from agents.backends import describe_backend
    from graphs.amem4rec.training import train_pool, training_summary
    from recgraph.llm_session import llm_session
    from world.environment import get_environment
    from world.errors import RecgraphError

    if args.concurrency < 1:
        raise RecgraphError(f"--concurrency must be at least 1, got {args.concurrency}")
    env = get_environment(args.dataset)
    with llm_session(args, schema=Amem4RecContext) as (base, server):
        knobs: dict[str, Any] = {"amem4rec_pool": args.pool}
        if args.windows_per_user is not None:
            knobs["amem4rec_windows_per_user"] = args.windows_per_user
        if args.round_windows is not None:
            knobs["amem4rec_round_windows"] = args.round_windows
        context = replace(base, **knobs)
        if context.amem4rec_windows_per_user < 0 or context.amem4rec_round_windows < 1:
            raise RecgraphError("--windows-per-user must be >= 0 and --round-windows >= 1")
        users = training_users(env, args.users, context.amem4rec_window)
        pool = training_pool(context, env)
        plan = plan_windows(env, users, context.amem4rec_window, context.amem4rec_windows_per_user)
        todo = len(plan) - len(pool.applied_windows() & {ref.key for ref in plan})
        cap = context.amem4rec_windows_per_user or "all"
        console.print(
            f"[bold]{env.dataset.name}[/]: {len(users)} users, {len(plan)} windows of "
            f"{context.amem4rec_window} training items ({cap} per user, latest first), {todo} still to "
            f"train into {pool.location}; "
            f"at most {3 * todo} LLM agent calls (1 extraction per window, +2 when Eq. 7 updates; "
            f"retries extra); rounds of {context.amem4rec_round_windows}, concurrency {args.concurrency}; "
            f"backend: {describe_backend(args.llm)}"
        )
        with progress_bar() as progress:
            task = progress.add_task("windows", total=len(plan))
            run = train_pool(
                env,
                context,
                users,
                args.concurrency,
                lambda done, total: progress.update(task, completed=done),
            )
        stats = server.stats() if server else None
    summary = training_summary(run)
    print_summary(summary)
    if stats is not None:
        from bench.stats.fault_report import fault_table

        console.print(fault_table(stats, {"training": summary["this_run"]}))
    return 0


def print_summary(summary: dict[str, Any]) -> None:
    """The pool's statistics and the training cost as console tables."""
    run = summary["this_run"]
    console.print(
        f"pool {escape(summary['pool'])}: {summary['pool_size']} memories from {summary['windows']} windows "
        f"({summary['users']} users), fingerprint {summary['fingerprint']}; this run trained "
        f"{run['windows']} windows in {run['seconds']:.1f} s ({run['windows_per_s']:.2f} windows/s)"
    )
    actions = Table(title="Eq. 7 actions (windows)")
    for column in (*summary["actions"], "stored", "evolutions", "merged"):
        actions.add_column(column, justify="right")
    actions.add_row(
        *(str(v) for v in summary["actions"].values()),
        str(summary["stored"]),
        str(summary["evolutions"]),
        str(summary["merged_evolutions"]),
    )
    console.print(actions)
    histogram = Table(title="memories by evolution count")
    histogram.add_column("evolution count", justify="right")
    histogram.add_column("memories", justify="right")
    for count, memories in summary["evolution_histogram"].items():
        histogram.add_row(count, str(memories))
    console.print(histogram)
    agents = Table(title=f"LLM use per agent ({summary['llm_calls_per_window']:.2f} calls per window)")
    columns = ("invocations", "llm_calls", "input_tokens", "output_tokens", "repairs", "fallbacks")
    agents.add_column("agent")
    for column in columns:
        agents.add_column(column, justify="right")
    for agent, row in summary["agents"].items():
        agents.add_row(agent, *(str(row[c]) for c in columns))
    console.print(agents)


def show_command(args: argparse.Namespace) -> int:
    """Print one memory and every version it went through."""
    from recgraph.llm_session import context_from_args
    from tools.amem4rec.folder import open_pool, pool_location
    from world.environment import get_environment

    env = get_environment(args.dataset)
    context = context_from_args(args, Amem4RecContext, amem4rec_pool=args.pool)
    pool = open_pool(pool_location(context, env.dataset), env.dataset)
    memory = pool.get(args.memory_id)
    console.print(
        escape(
            f"{memory.id} (pool {pool.location}): evolution_count {memory.evolution_count}, version "
            f"{memory.version}, created from user {memory.created_user} window {memory.created_window}"
        )
    )
    console.print(escape(f"behavior_explanation: {memory.behavior_explanation}"))
    console.print(escape(f"pattern_description: {memory.pattern_description}"))
    lineage = Table(title="lineage (oldest first)")
    for column in ("version", "kind", "by window", "behavior_explanation", "pattern_description"):
        lineage.add_column(column)
    for row in pool.history(memory.id):
        kind = row["kind"] + (" (evolver's text merged with a concurrent version)" if row["proposed"] else "")
        lineage.add_row(
            str(row["version"]),
            kind,
            row["window_key"],
            escape(row["behavior_explanation"]),
            escape(row["pattern_description"]),
        )
    console.print(lineage)
    return 0
