"""The evaluation protocol a command's options name (`recgraph bench`, `bench perf`, `reproduce`)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.protocol.knob_settings import KnobSettings
    from bench.protocol.spec import Protocol


def protocol_from_args(args: argparse.Namespace, llm: str, knobs: KnobSettings | None = None) -> Protocol:
    """The `Protocol` named by the bench options (dataset, candidates, seed, scenario, users, and
    the `--set` knobs)."""
    from bench.protocol.spec import Protocol, user_count

    return Protocol(
        dataset=args.dataset,
        candidates=args.candidates,
        seed=args.seed,
        scenario=args.scenario,
        users=user_count(str(args.users)),
        llm=llm,
        mix_candidates=getattr(args, "mix_candidates", False),
        candidate_source=getattr(args, "candidate_source", "auto"),
        retrieval_pool=getattr(args, "retrieval_pool", 0),
        knobs=tuple(knobs.given.items()) if knobs is not None else (),
    )
