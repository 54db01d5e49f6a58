"""The graphs `langgraph dev` serves, by registry name (`./graphs/served.py:<name>`).

Each module attribute is `graphs.registry.get_graph(name)` (or a service graph), so a method's
ablation overrides and name apply in Studio exactly as in `recgraph bench`. The server reads the
module's own attributes, so they are bound when it is imported.
"""

from __future__ import annotations

from typing import Any

from graphs.registry import METHODS, SERVICE_GRAPHS, get_graph, service_graph


def served() -> dict[str, Any]:
    """Every servable compiled graph by name."""
    graphs = {name: get_graph(name) for name in METHODS}
    graphs.update({name: service_graph(name) for name in SERVICE_GRAPHS})
    return graphs


globals().update(served())
