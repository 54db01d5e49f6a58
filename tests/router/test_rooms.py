"""The router lives in its own rooms: its method tools are under agents/router/method_tools/, and
ChainRec's rooms neither hold them nor import the router's agents (the router plugs into ChainRec's
one extension point, graphs/chainrec/library_spec.py:PlannerLibrary)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHAINREC_ROOMS = (
    "agents/chainrec",
    "tools/chainrec",
    "graphs/chainrec",
    "state/chainrec",
    "prompts/chainrec",
)


def imported_modules(path: Path) -> set[str]:
    """Every module a Python file imports (absolute names)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_the_method_tools_are_the_router_s() -> None:
    from agents.router.catalog import METHOD_TOOLS

    names = {spec.name for spec in METHOD_TOOLS}
    assert names == {"MemoryNeighbourhood", "PatternMemories", "IntentEvidence", "CollaborativeSignal"}
    assert (REPO / "agents/router/method_tools/memory_neighbourhood.py").is_file()
    assert not (REPO / "agents/chainrec/online/method_tools").exists()


def test_chainrec_s_rooms_never_import_the_router_s_agents() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {module}"
        for room in CHAINREC_ROOMS
        for path in sorted((REPO / room).rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(("agents.router", "graphs.router", "state.router"))
    ]
    assert offenders == []
