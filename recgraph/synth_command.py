"""`recgraph datasets synth --users N --items M --interactions K ... --out DIR`: a synthetic catalog.

The options live on the `datasets` parser (its first path `synth` selects generation), so that
`recgraph datasets PATH ...` keeps listing; to list a folder literally named `synth`, pass `./synth`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from world.errors import RecgraphError

SYNTH = "synth"
"""The first `datasets` path that means "generate" rather than "list"."""
OPTIONS = ("users", "items", "interactions", "candidates_pool", "pool_fraction", "seed", "out")


class SynthUsageError(RecgraphError):
    """`recgraph datasets` called with generation options but without `synth` (or vice versa)."""


def add_synth_options(parser: argparse.ArgumentParser) -> None:
    """The generation options of `recgraph datasets synth`."""
    from world.synth import POOL_FRACTION

    group = parser.add_argument_group("synth (recgraph datasets synth ... --out DIR)")
    group.add_argument("--users", type=int, default=None, help="users to generate")
    group.add_argument("--items", type=int, default=None, help="catalog size")
    group.add_argument("--interactions", type=int, default=None, help="interactions in all (>= 3 per user)")
    group.add_argument("--no-categories", action="store_true", help="titles only: items get no category")
    group.add_argument(
        "--no-timestamps",
        action="store_true",
        help="order only: write the sequential layout (<name>.test.inter), no times",
    )
    group.add_argument(
        "--candidates-pool",
        type=int,
        default=None,
        help="write <name>.random: this many pre-sampled negatives for a share of the users "
        "(needs --no-timestamps)",
    )
    group.add_argument(
        "--pool-fraction",
        type=float,
        default=None,
        help=f"share of users with a pool (default {POOL_FRACTION}: ≈6k of 50k, as on the Amazon dumps)",
    )
    group.add_argument("--seed", type=int, default=None, help="seed (default 0; same seed, same files)")
    group.add_argument("--out", default=None, help="folder to write (its name names the dataset)")


def wants_synth(args: argparse.Namespace) -> bool:
    """True when `recgraph datasets` was asked to generate; raises `SynthUsageError` on a mix-up."""
    given = [name for name in OPTIONS if getattr(args, name, None) is not None]
    given += [name for name in ("no_categories", "no_timestamps") if getattr(args, name, False)]
    if args.paths[:1] == [SYNTH]:
        missing = [f"--{n}" for n in ("users", "items", "interactions", "out") if getattr(args, n) is None]
        if missing or len(args.paths) > 1:
            raise SynthUsageError(
                "usage: recgraph datasets synth --users N --items M --interactions K --out DIR "
                f"(missing: {', '.join(missing) or 'nothing'}; extra paths: {args.paths[1:] or 'none'})"
            )
        return True
    if given:
        flags = ", ".join("--" + name.replace("_", "-") for name in given)
        raise SynthUsageError(f"{flags} only apply to `recgraph datasets synth` (listing takes paths only)")
    return False


def synth(args: argparse.Namespace) -> int:
    """Generate and write the catalog, then print what was written and how long it took."""
    from world.synth import POOL_FRACTION, SynthSpec, generate
    from world.synth_write import write_synth

    spec = SynthSpec(
        users=args.users,
        items=args.items,
        interactions=args.interactions,
        categories=not args.no_categories,
        timestamps=not args.no_timestamps,
        pool=args.candidates_pool or 0,
        pool_fraction=POOL_FRACTION if args.pool_fraction is None else args.pool_fraction,
        seed=args.seed or 0,
    )
    started = time.perf_counter()
    data = generate(spec)
    files = write_synth(data, Path(args.out))
    sizes = data.summary()
    print(
        f"wrote {Path(args.out)} in {time.perf_counter() - started:.1f}s: {sizes['users']} users, "
        f"{sizes['items']} items, {sizes['interactions']} interactions, "
        f"{sizes['categories']} categories, {sizes['pool_users']} users with a candidate pool "
        f"({', '.join(f.name for f in files)})"
    )
    return 0
