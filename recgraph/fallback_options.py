"""`recgraph bench`'s options on fallbacks and repair: when the share of answers from fallbacks, or of
top-5 positions the model did not choose, warns or fails the run."""

from __future__ import annotations

import argparse

from bench.stats.fallbacks import (
    DEFAULT_FAIL_ABOVE,
    DEFAULT_REPAIR_WARN_ABOVE,
    DEFAULT_WARN_ABOVE,
    FallbackCheck,
    check_fallbacks,
)


def share(text: str) -> float:
    """An argparse type: a share between 0 and 1."""
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"a share between 0 and 1, got {text}")
    return value


def add_fallback_options(parser: argparse.ArgumentParser) -> None:
    """--fallback-warn, --repair-warn, --fallback-fail and --allow-fallbacks."""
    group = parser.add_argument_group(
        "fallbacks and repair",
        "fallback share: share of the agent answers asked of an LLM that came from the deterministic "
        "fallback; not chosen: share of the LLM rankers' top-5 positions the model did not choose "
        "(appended by repair in the seeded left-out order, or from a fallback answer). Neither is counted "
        "for the heuristic backend or classic methods.",
    )
    group.add_argument(
        "--fallback-warn",
        type=share,
        default=DEFAULT_WARN_ABOVE,
        help="warn when a method's fallback share is above this",
    )
    group.add_argument(
        "--repair-warn",
        type=share,
        default=DEFAULT_REPAIR_WARN_ABOVE,
        help="warn when a method's share of top-5 positions not chosen by the model is above this",
    )
    group.add_argument(
        "--fallback-fail",
        type=share,
        default=DEFAULT_FAIL_ABOVE,
        help="exit 3 (outputs still written) when a method's fallback share, or its share of top-5 "
        "positions not chosen by the model, is above this",
    )
    group.add_argument(
        "--allow-fallbacks",
        action="store_true",
        help="accept any fallback or repair share: warn, but exit 0",
    )


def fallback_check(args: argparse.Namespace, methods: dict) -> FallbackCheck:
    """The run's verdict on its methods' fallback and repair shares, with the command line's thresholds."""
    repair_warn = getattr(args, "repair_warn", DEFAULT_REPAIR_WARN_ABOVE)
    return check_fallbacks(methods, args.fallback_warn, args.fallback_fail, args.allow_fallbacks, repair_warn)
