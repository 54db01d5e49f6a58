"""`recgraph datasets [PATH ...]`: every dataset available, with its size and the fields it has.

It lists the paths given, in that order (a dataset, a folder of datasets, or a built-in name such as
ml-100k), or, without paths, ml-100k and every dataset under the data folder (`$RECGRAPH_DATA`,
default `../shared/data`).
A dataset that cannot be read gets a row with its error and the listing goes on (exit code 1).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from world.data import Dataset
from world.errors import RecgraphError

DATA_ENV = "RECGRAPH_DATA"
"""Env var naming the folder `recgraph datasets` searches by default."""
DEFAULT_DATA = "../shared/data"
"""The shared data folder beside the checkout (the path `--dataset` examples use)."""
SPLIT_SUFFIXES = (".train.inter", ".valid.inter", ".test.inter")
MAX_DEPTH = 3


def discover(folder: Path) -> list[str]:
    """Dataset paths under `folder` (at most `MAX_DEPTH` levels down), in name order: each sequential
    split prefix (`<name>.test.inter`), AgentSociety folder (item.json + review.json), InstructRec
    folder (`*.instruction`), RecBole atomic folder (one `<name>.inter`), MIND folder
    (`behaviors.tsv`) and Amazon reviews file (`<Category>.jsonl[.gz]` / `.json[.gz]`)."""
    from world.loaders.amazon import review_files

    found: list[str] = []
    for depth in range(MAX_DEPTH + 1):
        for place in sorted(folder.glob("/".join(["*"] * depth)) if depth else [folder]):
            if not place.is_dir():
                continue
            tests = sorted(place.glob("*.test.inter"))
            found += [str(test.with_name(test.name.removesuffix(".test.inter"))) for test in tests]
            if tests:
                continue
            atomic = [p for p in place.glob("*.inter") if not p.name.endswith(SPLIT_SUFFIXES)]
            agentsociety = (place / "item.json").is_file() and (place / "review.json").is_file()
            mind = (place / "behaviors.tsv").is_file()
            if agentsociety or mind or any(place.glob("*.instruction")) or len(atomic) == 1:
                found.append(str(place))
            else:
                found += [str(p) for p in review_files(place)]
    return found


def specs(paths: list[str]) -> list[str]:
    """What to describe: the given datasets in the order given (folders of datasets expanded; a
    built-in only when named), or, without paths, the built-in ones and those under the data folder."""
    from world.datasets import BUILTIN

    if not paths:
        root = Path(os.environ.get(DATA_ENV) or DEFAULT_DATA)
        return [*BUILTIN, *(discover(root) if root.is_dir() else [])]
    wanted: list[str] = []
    for path in paths:
        wanted += (discover(Path(path)) if Path(path).is_dir() else []) or [path]
    return list(dict.fromkeys(wanted))


def fields_of(data: Dataset) -> str:
    """The optional fields a dataset has (what the methods can use)."""
    items = data.items.values()
    pooled = bool(data.presplit) and any(u.candidates for u in data.presplit.values())
    present = {
        "timestamps" if data.has_time else "order only": True,
        "ratings": any(e.rating is not None for e in data.interactions),
        "reviews": any(e.review for e in data.interactions),
        "categories": any(item.categories for item in items),
        "descriptions": any(item.description for item in items),
        "user profiles": bool(data.users),
        "instructions": bool(data.instructions),
        "fixed candidates": data.pool_source == "auto" and pooled,
        "impressions (--candidate-source impressions)": data.pool_source != "auto" and pooled,
    }
    return ", ".join(name for name, has in present.items() if has)


def datasets(args: argparse.Namespace) -> int:
    """`recgraph datasets`: one row per dataset; unreadable ones say why, the rest still list
    (`recgraph datasets synth ...` generates a synthetic catalog instead: recgraph/synth_command.py)."""
    from recgraph.synth_command import synth, wants_synth

    if wants_synth(args):
        return synth(args)
    from rich.console import Console
    from rich.table import Table

    from world.environment import get_environment
    from world.filters import filtered_spec

    table = Table(title="datasets")
    table.add_column("dataset", no_wrap=True)
    for column in ("users", "items", "interactions", "split users"):
        table.add_column(column, justify="right")
    table.add_column("fields")
    failures: list[str] = []
    notes: list[str] = []
    for given in specs(args.paths):
        spec = filtered_spec(given, args.min_interactions, args.min_user_interactions)
        try:
            env = get_environment(spec)
        except RecgraphError as error:
            failures.append(f"recgraph: cannot read dataset {given!r}: {error}")
            continue
        data = env.dataset
        counts = (len(env.user_ids), len(env.item_ids), len(data.interactions), len(env.cases))
        table.add_row(given if given != data.name else data.name, *map(str, counts), fields_of(data))
        notes += [f"{given}: {data.filtered}"] if data.filtered else []
    Console(width=max(120, Console().width)).print(table)
    for line in notes:  # what the filters kept, before → after
        print(line)
    for line in failures:
        print(line, file=sys.stderr)
    return 1 if failures else 0


def add_datasets_parser(commands: argparse._SubParsersAction) -> None:
    """`recgraph datasets [PATH ...]` and `recgraph datasets synth ... --out DIR`."""
    from recgraph.synth_command import add_synth_options

    parser = commands.add_parser(
        "datasets", help="list datasets with statistics and fields (bad ones are reported, not fatal)"
    )
    parser.add_argument(
        "paths",
        nargs="*",
        help="datasets (paths or ml-100k) or folders of datasets, listed in this order; "
        "or `synth` with the options below to generate one "
        f"(default: those under ${DATA_ENV}, else {DEFAULT_DATA})",
    )
    for option, what in (
        ("--min-interactions", "list each dataset's iterative K-core (users and items with at least K)"),
        ("--min-user-interactions", "list each dataset with only the users having at least K interactions"),
    ):
        parser.add_argument(option, type=int, default=0, metavar="K", help=f"{what}; 0: off")
    add_synth_options(parser)
    parser.set_defaults(handler=datasets)
