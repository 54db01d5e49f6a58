"""`recgraph` command line: thin wrappers over bench/ and graphs/."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from recgraph.settings import apply_offline_defaults

SCENARIO_CHOICES = ("classic", "cold_user", "cold_item", "evolving_long", "evolving_short")


def add_dataset_options(parser: argparse.ArgumentParser) -> None:
    """Options every data-reading command shares."""
    parser.add_argument("--dataset", default="ml-100k", help="ml-100k or a dataset path")
    parser.add_argument("--seed", type=int, default=0, help="seed for users and candidates")
    parser.add_argument("--scenario", default="classic", choices=SCENARIO_CHOICES)
    llm = parser.add_argument_group("LLM backend")
    llm.add_argument(
        "--llm",
        default=os.environ.get("RECGRAPH_LLM", "heuristic"),
        help="heuristic (no LLM, default), local (bundled SmolLM2), sim (loopback simulator), "
        "or openai:<model>; env RECGRAPH_LLM",
    )
    llm.add_argument("--base-url", default="", help="OpenAI-compatible endpoint for openai:<model>")
    llm.add_argument("--llm-timeout", type=float, default=None, help="seconds per LLM request")
    llm.add_argument("--llm-retries", type=int, default=2, help="retries before the fallback")
    llm.add_argument("--rps", type=float, default=0.0, help="client rate limit, requests/s (0: none)")
    llm.add_argument("--llm-cache", default="", help="SQLite file replaying identical LLM calls")
    llm.add_argument("--sim-latency", type=float, default=0.0, help="sim: seconds per answer")
    llm.add_argument("--faults", type=float, default=0.0, help="sim: share of requests faulted")
    llm.add_argument("--fault-kinds", default="all", help="sim: comma-separated fault kinds")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="recgraph", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    bench = commands.add_parser("bench", help="compare methods on one protocol (or: bench perf)")
    bench.add_argument(
        "mode",
        nargs="?",
        choices=["perf"],
        default=None,
        help="perf: overhead and throughput against the loopback LLM server",
    )
    bench.add_argument("--latency", type=float, default=0.2, help="perf: seconds per LLM answer")
    bench.add_argument("--methods", default="all", help="comma-separated names, or all")
    bench.add_argument("--users", type=int, default=200, help="users to evaluate")
    bench.add_argument("--candidates", type=int, default=10, help="candidates per user (N)")
    bench.add_argument("--concurrency", type=int, default=4, help="users in flight at once")
    bench.add_argument("--out", default=None, help="output folder (resumable; default runs/bench)")
    add_dataset_options(bench)

    datasets = commands.add_parser("datasets", help="list datasets with statistics")
    datasets.add_argument("paths", nargs="*", help="extra dataset paths to describe")

    memrec = commands.add_parser(
        "memrec",
        help="MemRec tools: `memrec rules` writes curation rules; `memrec feedback` runs Stage W on one "
        "interaction; `memrec init` has LM_Mem write users' initial memories",
    )
    memrec.add_argument("action", choices=["rules", "feedback", "init"])
    memrec.add_argument("--out", default=None, help="rules: where to save the rule set (JSON)")
    memrec.add_argument(
        "--user", default=None, help="feedback: the user who interacted; init: only this user"
    )
    memrec.add_argument("--users", type=int, default=None, help="init: only the first N users (by id)")
    memrec.add_argument("--concurrency", type=int, default=8, help="init: LLM calls in flight")
    memrec.add_argument("--item", default=None, help="feedback: the item they interacted with")
    memrec.add_argument(
        "--memory", default="", help="feedback/init: memory graph file (default: the dataset's own)"
    )
    add_dataset_options(memrec)

    recommend = commands.add_parser("recommend", help="one user's ranked list")
    recommend.add_argument("--method", required=True)
    recommend.add_argument("--user", required=True)
    recommend.add_argument(
        "--candidates",
        type=int,
        default=None,
        help="rank the protocol's N candidates (target included) instead of the whole catalog",
    )
    recommend.add_argument("--top-k", type=int, default=10, help="list length without candidates")
    add_dataset_options(recommend)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `recgraph` console script."""
    apply_offline_defaults()
    args = build_parser().parse_args(argv)
    from pydantic import ValidationError

    from agents.backends import check_backend
    from bench.errors import RecgraphError
    from recgraph import commands, memrec_command
    from state.contract import InvalidRecInput

    handlers = {
        "bench": commands.bench_or_perf,
        "datasets": commands.datasets,
        "recommend": commands.recommend,
        "memrec": memrec_command.memrec,
    }
    try:
        if hasattr(args, "llm"):
            check_backend(args.llm)
        return handlers[args.command](args)
    except (RecgraphError, InvalidRecInput, ValidationError) as error:
        print(f"recgraph: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("recgraph: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
