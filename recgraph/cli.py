"""`recgraph` command line: thin wrappers over bench/ and graphs/."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from recgraph.compare_command import add_compare_parser
from recgraph.datasets_command import add_datasets_parser
from recgraph.fallback_options import add_fallback_options
from recgraph.help_format import DefaultsHelpFormatter, methods_epilog
from recgraph.options import add_dataset_options, add_set_option
from recgraph.reproduce_command import add_reproduce_parser
from recgraph.settings import apply_offline_defaults

BENCH_EXIT_CODES = """exit status:
  0    every method finished
  2    bad input or an unreachable LLM endpoint (one line on stderr)
  3    a method's fallback share, or its share of top-5 positions not chosen by the
       model, is above --fallback-fail (reports written)
  4    a method crashed: one line names the method, user, node and error; the traceback is
       appended to OUT/errors.log; the methods that finished are reported and the same
       command resumes
  130  interrupted (the same command resumes)"""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="recgraph", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    bench = commands.add_parser(
        "bench",
        help="compare methods on one protocol (or: bench perf)",
        formatter_class=DefaultsHelpFormatter,
        epilog=f"{methods_epilog()}\n\n{BENCH_EXIT_CODES}",
    )
    bench.add_argument(
        "mode",
        nargs="?",
        choices=["perf"],
        default=None,
        help="perf: overhead and throughput against the loopback LLM server",
    )
    bench.add_argument(
        "--latency",
        type=float,
        default=1.0,
        help="perf only: seconds the simulator takes per LLM answer (1.0: a hosted model's order)",
    )
    bench.add_argument("--methods", default="all", help="comma-separated method names (listed below), or all")
    bench.add_argument(
        "--users",
        default="200",
        help="users to evaluate (a seeded sample), or all: every eligible user (a paper's full test set)",
    )
    bench.add_argument("--candidates", type=int, default=10, help="candidates per user (N)")
    bench.add_argument("--concurrency", type=int, default=4, help="users in flight at once")
    bench.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes the users are sharded over (the users in flight are shared among them); "
        "for when one process's CPU is the limit",
    )
    add_server_option(
        bench,
        "every user's run goes to this LangGraph deployment (comma-separated replicas "
        "sharing one database); methods' prepare steps run there too",
    )
    bench.add_argument("--out", default=None, help="output folder (resumable; default runs/bench)")
    bench.add_argument(
        "--checkpoints",
        action="store_true",
        help="run each user on a LangGraph thread kept in OUT/checkpoints.sqlite (in the database with "
        "--database-url); the same command resumes a crashed user from its last finished node",
    )
    bench.add_argument(
        "--reference",
        default=None,
        help="method the others are compared with (paired tests); default: strongest classic by ndcg@5",
    )
    bench.add_argument(
        "--mix-candidates",
        action="store_true",
        help="when the dataset ships candidate pools for some users, also evaluate the others with "
        "uniformly sampled negatives (default: only users with a pool)",
    )
    bench.add_argument(
        "--candidate-source",
        choices=("auto", "impressions", "retrieval", "retrieval_negatives"),
        default="auto",
        help="auto: the dataset's candidate pools where it ships them, else negatives sampled uniformly "
        "from the items the user never interacted with (MIND too); impressions (MIND): negatives drawn "
        "from the news shown beside the user's last click and never clicked (users shown fewer than N-1 "
        "such news are not evaluated); "
        "retrieval: ARAG's recall stage, the top N of an embedding retrieval over the unseen catalog for "
        "the user context, as retrieved (a user whose target it missed scores 0; metrics.json reports "
        "the retrieval's recall@N and each method over the recalled users too); retrieval_negatives: "
        "the target and N-1 negatives drawn from the retrieval's top --retrieval-pool",
    )
    bench.add_argument(
        "--retrieval-pool",
        type=int,
        default=0,
        metavar="K",
        help="retrieval_negatives: draw the negatives from the retrieval's top K (default and least: 5N)",
    )
    add_dataset_options(bench)
    add_set_option(bench)
    add_fallback_options(bench)
    bench.add_argument(
        "--trace",
        action="store_true",
        help="send every user's run to LangSmith (LANGSMITH_ENDPOINT / LANGSMITH_API_KEY), with its "
        "metrics as feedback; off by default, even when LANGSMITH_TRACING is set",
    )
    bench.add_argument(
        "--langsmith-project",
        default=None,
        help="LangSmith project of --trace (default: LANGSMITH_PROJECT, else recgraph)",
    )

    add_datasets_parser(commands)  # `recgraph datasets [PATH ...]` (handler set by the parser)

    add_compare_parser(commands)  # `recgraph compare RUN_A RUN_B` (handler set by the parser)

    add_reproduce_parser(commands)  # `recgraph reproduce PAPER` (handler set by the parser)

    recommend = commands.add_parser(
        "recommend",
        help="one user's ranked list",
        formatter_class=DefaultsHelpFormatter,
        epilog=methods_epilog("--method M"),
    )
    recommend.add_argument("--method", required=True, help="the registered method to ask (listed below)")
    recommend.add_argument("--user", required=True, help="a user id of the dataset")
    recommend.add_argument(
        "--candidates",
        type=int,
        default=None,
        help="rank the protocol's N candidates (target included) instead of the whole catalog",
    )
    recommend.add_argument("--top-k", type=int, default=10, help="list length without candidates")
    add_server_option(recommend, "ask this LangGraph deployment instead of running the graph here")
    add_dataset_options(recommend)
    from graphs.registry import cli_registrars

    for register in cli_registrars():  # methods' own subcommands (e.g. `recgraph memrec ...`)
        register(commands)
    return parser


def add_server_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--server URL[,URL…]`: a LangGraph deployment (`langgraph dev` or up) serving langgraph.json."""
    parser.add_argument("--server", default=None, metavar="URL[,URL…]", help=f"{what}; default: in-process")
    parser.add_argument(
        "--server-key",
        default=None,
        metavar="KEY",
        help="credential sent to --server (a service API key or JWT); default: RECGRAPH_SERVER_KEY",
    )


def connect_database(url: str | None) -> None:
    """Adopt `--database-url` (else RECGRAPH_DATABASE_URL) and reach it now: a bad or unreachable
    database stops the command in one line before any work, not half-way through a run."""
    from world.database import database_url, shared_pool, use_database_url

    use_database_url(url)
    if (configured := database_url()) is not None:
        shared_pool(configured)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `recgraph` console script."""
    apply_offline_defaults()
    args = build_parser().parse_args(argv)
    from pydantic import ValidationError

    from agents.backends import check_backend
    from bench.run.crash import EXIT_METHOD_CRASHED, MethodCrashed, append_errors_log
    from recgraph import commands
    from state.contract import InvalidRecInput
    from world.errors import RecgraphError
    from world.paths import cache_root

    handlers = {
        "bench": commands.bench_or_perf,
        "recommend": commands.recommend,
    }
    try:
        if hasattr(args, "llm"):
            check_backend(args.llm)
        connect_database(getattr(args, "database_url", None))
        handler = getattr(args, "handler", None) or handlers[args.command]
        return handler(args)
    except (RecgraphError, InvalidRecInput, ValidationError) as error:
        print(f"recgraph: error: {error}", file=sys.stderr)
        return 2
    except MethodCrashed as crash:  # a bug in a method outside `bench` (e.g. bench perf): its one line
        log = append_errors_log(Path(getattr(args, "out", None) or cache_root()), crash)
        print(f"recgraph: error: {crash} (traceback in {log})", file=sys.stderr)
        return EXIT_METHOD_CRASHED
    except KeyboardInterrupt:
        print("recgraph: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    finally:
        preloads = sys.modules.get("bench.run.preload")  # loaded only when a run started preloads
        if preloads is not None:
            preloads.settle_preloads()


def run() -> None:
    """The `recgraph` console script: `main`, then an exit that skips tearing the interpreter down.

    Threads are joined and exit handlers run as at any exit (tracing uploads, memory writers
    draining, executors' workers); only the teardown of every module and object is skipped (0.9 s
    after an 18-method bench on 2 cores): the operating system takes the memory back anyway. An
    exception from `main` (a bug) still exits the usual way, with its traceback."""
    code = main()
    threading._shutdown()  # the interpreter's own first exit step: non-daemon threads, executors
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    run()
