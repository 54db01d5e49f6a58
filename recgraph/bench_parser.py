"""The options of `recgraph bench` (and `bench perf`), and a parser of that command alone."""

from __future__ import annotations

import argparse

from recgraph.fallback_options import add_fallback_options
from recgraph.help_format import DefaultsHelpFormatter, methods_epilog
from recgraph.options import add_dataset_options, add_server_option, add_set_option

BENCH_EXIT_CODES = """exit status:
  0    every method finished
  2    bad input or an unreachable LLM endpoint (one line on stderr)
  3    a method's fallback share, or its share of top-5 positions not chosen by the
       model, is above --fallback-fail (reports written)
  4    a method crashed: one line names the method, user, node and error; the traceback is
       appended to OUT/errors.log; the methods that finished are reported and the same
       command resumes
  130  interrupted (the same command resumes)"""


def add_bench_parser(commands: argparse._SubParsersAction) -> None:
    """Register `recgraph bench [perf]` and its options (cli.py dispatches it)."""
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


def bench_parser() -> argparse.ArgumentParser:
    """A parser of `recgraph bench` alone: `recgraph reproduce` parses each of its runs' options with
    it, as `recgraph bench` would."""
    parser = argparse.ArgumentParser(prog="recgraph")
    add_bench_parser(parser.add_subparsers(dest="command", required=True))
    return parser
