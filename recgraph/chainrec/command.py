"""`recgraph chainrec ...`: ChainRec's offline commands (the registry's CLI hook for ChainRec methods).

Each action lives in its own module, listed in `ACTION_MODULES`; a module exposes
`add_actions(actions)`, adding its subparsers with `set_defaults(handler=...)`.
"""

from __future__ import annotations

import argparse
import importlib

ACTION_MODULES: tuple[str, ...] = ("recgraph.chainrec.offline", "recgraph.chainrec.mine")
"""Modules adding `recgraph chainrec` actions (each has `add_actions(actions)`)."""


def register(commands: argparse._SubParsersAction) -> None:
    """Add `recgraph chainrec <action>` with every action of `ACTION_MODULES`."""
    if not ACTION_MODULES:
        return
    parser = commands.add_parser(
        "chainrec", help="ChainRec offline: trajectories, planner training, exports, tool mining"
    )
    actions = parser.add_subparsers(dest="chainrec_action", required=True)
    for module in ACTION_MODULES:
        importlib.import_module(module).add_actions(actions)
