"""`recgraph` command line: thin wrappers over bench/ and graphs/."""

from __future__ import annotations

import argparse
import atexit
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from recgraph.bench_parser import add_bench_parser
from recgraph.compare_command import add_compare_parser
from recgraph.datasets_command import add_datasets_parser
from recgraph.help_format import DefaultsHelpFormatter, methods_epilog
from recgraph.options import add_dataset_options, add_server_option
from recgraph.reproduce_command import add_reproduce_parser
from recgraph.settings import apply_offline_defaults


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="recgraph", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    add_bench_parser(commands)  # `recgraph bench [perf]`

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
    from recgraph import bench_command, recommend_command
    from state.contract import InvalidRecInput
    from world.errors import RecgraphError
    from world.paths import cache_root

    handlers = {
        "bench": bench_command.bench_or_perf,
        "recommend": recommend_command.recommend,
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
