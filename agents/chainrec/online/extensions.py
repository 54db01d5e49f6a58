"""ChainRec's one extension point: tool cards another method family adds to the library at run time.

A family that plans with ChainRec's planner over more tools (the router, agents/router/catalog.py)
registers its cards here once, at import; each card names its graph node, its stage and the context
field of its fusion weight, so CandidateRank's fusion (fusion.py) weighs its memory entries and reads
their stage without ChainRec's code naming any of them. The family's graph adds the nodes, its
catalog the cards, its context the weight fields.
"""

from __future__ import annotations

from collections.abc import Iterable

from agents.chainrec.online.tool_spec import Catalog, ToolSpec

_registered: dict[str, ToolSpec] = {}
"""Tool name -> its card, in registration order."""


def register_tools(specs: Iterable[ToolSpec]) -> None:
    """Add cards to the library's extension (registering the same card again is a no-op; another card
    under a registered name is refused: one name, one tool)."""
    for spec in specs:
        known = _registered.get(spec.name)
        if known is not None and known != spec:
            raise ValueError(f"tool {spec.name} is registered twice with different cards")
        _registered[spec.name] = spec


def registered_tools() -> Catalog:
    """Every registered card, in registration order."""
    return tuple(_registered.values())
