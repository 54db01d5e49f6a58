"""The router's episode state: ChainRec's, plus which method tools cannot run in this episode."""

from __future__ import annotations

from state.chainrec.state import ChainRecState


class RouterState(ChainRecState, total=False):
    """Blackboard of the router graph (graphs/router/graph.py)."""

    unavailable: dict[str, str]
    """Written by `planner` (first visit): method tool -> what it is missing and how to build it
    (a MemRec memory graph, a trained AMEM4Rec pool); such a tool is masked for the whole episode."""
