"""Command-line options several `recgraph` subcommands share (methods' own subcommands too)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from llmsim.faults import FAULT_KINDS, OPT_IN_FAULTS
from world.scenarios import BENCH_SCENARIOS

LLM_BACKENDS = ("heuristic", "local", "sim", "openai:<model>")
"""The values of --llm (`openai:<model>` names any model of an OpenAI-compatible endpoint)."""


class DatasetSpec(argparse.Action):
    """Stores `--dataset` or a filter option, then sets `dataset` to the filtered spec
    (`world.filters.filtered_spec`, e.g. `data/x#kcore:5`), whatever order the options came in."""

    def __call__(
        self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None
    ) -> None:
        """Record the value and recompute `namespace.dataset`."""
        from world.filters import filtered_spec

        if isinstance(values, int) and values < 0:
            parser.error(f"{option} must be 0 (off) or more, got {values}")
        setattr(namespace, self.dest, values)
        namespace.dataset = filtered_spec(
            namespace.dataset_given, namespace.min_interactions, namespace.min_user_interactions
        )


def add_dataset_options(parser: argparse.ArgumentParser) -> None:
    """Options every data-reading command shares."""
    parser.add_argument(
        "--dataset",
        dest="dataset_given",
        metavar="DATASET",
        default="ml-100k",
        action=DatasetSpec,
        help="ml-100k or a dataset path (RecBole atomic, sequential, AgentSociety, InstructRec, MIND, "
        "Amazon 2014/2018/2023 reviews; docs/datasets.md)",
    )
    parser.set_defaults(dataset="ml-100k")
    parser.add_argument(
        "--min-interactions",
        type=int,
        default=0,
        action=DatasetSpec,
        metavar="K",
        help="iterative K-core after loading: users and items with fewer than K interactions are dropped "
        "until none is left (0: off); the run header says what it kept",
    )
    parser.add_argument(
        "--min-user-interactions",
        type=int,
        default=0,
        action=DatasetSpec,
        metavar="K",
        help="keep only users with at least K interactions (after --min-interactions; catalog unchanged)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed for users and candidates")
    parser.add_argument(
        "--scenario", default="classic", choices=BENCH_SCENARIOS, help="what the user may see"
    )
    shared = parser.add_argument_group("shared memory")
    shared.add_argument(
        "--database-url",
        default=None,
        help="postgresql://… URL: MemRec's memory graph and write queue, AMEM4Rec's pools and run "
        "checkpoints live there, shared by every process and machine using it (default: SQLite and "
        "Chroma files under RECGRAPH_HOME); env RECGRAPH_DATABASE_URL",
    )
    llm = parser.add_argument_group("LLM backend")
    llm.add_argument(
        "--llm",
        default=os.environ.get("RECGRAPH_LLM", "heuristic"),
        help="heuristic (no LLM, the default), local (bundled SmolLM2), sim (loopback simulator), "
        "or openai:<model> (--base-url for any OpenAI-compatible endpoint); env RECGRAPH_LLM",
    )
    llm.add_argument("--base-url", default="", help="OpenAI-compatible endpoint for openai:<model>")
    llm.add_argument("--llm-timeout", type=float, default=None, help="seconds per LLM request")
    llm.add_argument("--llm-retries", type=int, default=2, help="retries before the fallback")
    llm.add_argument(
        "--max-connection-failures",
        type=int,
        default=3,
        help="connection failures in a row that stop the run with an error naming the endpoint (0: never)",
    )
    llm.add_argument("--rps", type=float, default=0.0, help="client rate limit, requests/s (0: none)")
    llm.add_argument("--llm-cache", default="", help="SQLite file replaying identical LLM calls")
    llm.add_argument("--sim-latency", type=float, default=0.0, help="sim: seconds per answer")
    llm.add_argument("--faults", type=float, default=0.0, help="sim: share of requests faulted")
    usual = ", ".join(k for k in FAULT_KINDS if k not in OPT_IN_FAULTS)
    opt_in = ", ".join(k for k in FAULT_KINDS if k in OPT_IN_FAULTS)
    llm.add_argument(
        "--fault-kinds",
        default="all",
        help=f"sim: comma-separated fault kinds of {usual}, {opt_in}; or all (every kind but the "
        f"opt-in {opt_in}, which must be named)",
    )


def add_set_option(parser: argparse.ArgumentParser) -> None:
    """`--set NAME=VALUE` (repeatable): a knob of the selected methods' context classes."""
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set a knob of the selected methods' context classes (repeatable), e.g. --set memrec_k=8 "
        "--set amem4rec_window=4; parsed by the field's type (int, float, bool, str, choices). It applies "
        "to each selected method that has the knob and is refused when none has it, when the value does "
        "not parse, when a selected ablation fixes the knob to another value (e.g. memrec_use_read with "
        "memrec_no_read), or when the knob has its own option (--seed, --llm, ...). Recorded in the "
        "protocol (a resumed --out refuses other values) and per method in metrics.json `set`. "
        "Output budgets: max_output_tokens (least per agent) and output_budget (per_agent or flat)",
    )


def add_server_option(parser: argparse.ArgumentParser, what: str) -> None:
    """`--server URL[,URL…]`: a LangGraph deployment (`langgraph dev` or up) serving langgraph.json."""
    parser.add_argument("--server", default=None, metavar="URL[,URL…]", help=f"{what}; default: in-process")
    parser.add_argument(
        "--server-key",
        default=None,
        metavar="KEY",
        help="credential sent to --server (a service API key or JWT); default: RECGRAPH_SERVER_KEY",
    )
