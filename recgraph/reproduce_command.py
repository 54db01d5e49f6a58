"""`recgraph reproduce PAPER --dataset NAME=PATH ...`: a paper's protocol, dataset by dataset, its
main tables with the published numbers beside ours, and the cost before the first call
(bench/reproduce/)."""

from __future__ import annotations

import argparse
import os

from recgraph.help_format import DefaultsHelpFormatter
from recgraph.options import add_set_option


def dataset_names() -> str:
    """Each paper's dataset NAMEs, for --help (from graphs/<paper>/published.json)."""
    from bench.reproduce.papers import PAPERS, load_paper

    return "\n".join(f"  {p}: {', '.join(d.name for d in load_paper(p).datasets)}" for p in PAPERS)


EPILOG = """papers: memrec, amem4rec, arag, chainrec (published numbers: graphs/<paper>/published.json).
Datasets, the NAMEs --dataset NAME=PATH takes (each fills only its own columns):
{names}
Each scenario a dataset's columns use is one `recgraph bench` run in OUT/<NAME>/<scenario> (the same
command resumes; another command with more datasets adds their columns to the same OUT);
OUT/reproduce.md and reproduce.json hold the paper's tables with ours beside them, a dataset not run
marked "not run". With a hosted model (openai:<model>) the LLM cache OUT/llm_cache.sqlite is on
unless --llm-cache names another file, so a rerun or a resumed run pays nothing twice."""


def add_reproduce_parser(commands: argparse._SubParsersAction) -> None:
    """Register `recgraph reproduce` (its handler is set here)."""
    parser = commands.add_parser(
        "reproduce",
        help="run a paper's protocol and write its tables with the published numbers beside ours",
        formatter_class=DefaultsHelpFormatter,
        epilog=EPILOG.format(names=dataset_names()),
    )
    parser.add_argument("paper", help="memrec, amem4rec, arag or chainrec")
    parser.add_argument(
        "--dataset",
        action="append",
        required=True,
        metavar="NAME=PATH",
        help="one of the paper's datasets (NAME, listed below) and the data standing for it (a path, "
        "or ml-100k); repeatable",
    )
    parser.add_argument(
        "--users",
        default=None,
        help="users per run, a count or all (default: the paper's: all eligible for MemRec's main tables, "
        "its named sample for the tables the paper's later studies use)",
    )
    parser.add_argument("--candidates", type=int, default=None, help="N (default: the paper's)")
    parser.add_argument(
        "--min-user-interactions",
        type=int,
        default=None,
        metavar="K",
        help="keep users with at least K interactions (default: the paper's filter, e.g. AMEM4Rec's "
        "more than 10; 0: none); not applied to cold_start",
    )
    add_set_option(parser)
    parser.add_argument("--seed", type=int, default=0, help="seed for users and candidates")
    parser.add_argument("--concurrency", type=int, default=4, help="users in flight at once")
    parser.add_argument("--out", default=None, help="output folder (default runs/reproduce/PAPER)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the planned LLM calls, tokens and dollars per method and stop: nothing is sent "
        "to the model and nothing written",
    )
    llm = parser.add_argument_group("LLM backend")
    llm.add_argument(
        "--llm",
        default=os.environ.get("RECGRAPH_LLM", "heuristic"),
        help="heuristic, local, sim or openai:<model>; env RECGRAPH_LLM",
    )
    llm.add_argument("--base-url", default="", help="OpenAI-compatible endpoint for openai:<model>")
    llm.add_argument("--llm-retries", type=int, default=2, help="retries before the fallback")
    llm.add_argument(
        "--llm-cache",
        default="",
        help="SQLite file replaying identical LLM calls (default with openai:<model>: OUT/llm_cache.sqlite)",
    )
    parser.set_defaults(handler=reproduce)


def reproduce(args: argparse.Namespace) -> int:
    """The `recgraph reproduce` handler."""
    from rich.markup import escape

    from recgraph.reproduce_run import reproduce as run
    from recgraph.terminal import console

    return run(args, lambda line: console.print(escape(line), soft_wrap=True))
