"""The router lives in its own rooms: its method tools are under agents/router/method_tools/, and
ChainRec's rooms neither hold them, name them nor import the router's agents or prompts (the router
plugs into ChainRec's extension points: its cards and fusion fields through
agents/chainrec/online/extensions.py, its graph through graphs/chainrec/library_spec.py:PlannerLibrary)."""

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
    assert names == {
        "MemoryNeighbourhood", "PatternMemories", "IntentEvidence", "CollaborativeSignal", "SequentialSignal",
        "GraphSignal", "AgentMemories", "RecencyRanking",
    }  # fmt: skip
    assert (REPO / "agents/router/method_tools/memory_neighbourhood.py").is_file()
    from agents.router.catalog import ROUTER_TOOLS
    from graphs.router.spec import ALL_TOOLS

    assert len(ROUTER_TOOLS) - 1 == ALL_TOOLS  # router_fixed's budget reaches every evidence tool
    assert not (REPO / "agents/chainrec/online/method_tools").exists()


def test_chainrec_s_rooms_never_import_the_router_s_agents() -> None:
    offenders = [
        f"{path.relative_to(REPO)}: {module}"
        for room in CHAINREC_ROOMS
        for path in sorted((REPO / room).rglob("*.py"))
        for module in imported_modules(path)
        if module.startswith(("agents.router", "graphs.router", "state.router", "prompts.router"))
    ]
    assert offenders == []


ROUTER_TOOL_NAMES = (
    "MemoryNeighbourhood", "PatternMemories", "IntentEvidence", "CollaborativeSignal", "SequentialSignal",
    "GraphSignal",
)  # fmt: skip


def test_chainrec_s_rooms_never_name_the_router_s_tools() -> None:
    """ChainRec's library holds nothing only the router uses: the router registers its cards and
    fusion fields through agents/chainrec/online/extensions.py."""
    offenders = [
        f"{path.relative_to(REPO)}: {name}"
        for room in CHAINREC_ROOMS
        for path in sorted((REPO / room).rglob("*"))
        if path.is_file() and path.suffix in (".py", ".json")
        for name in ROUTER_TOOL_NAMES
        if name in path.read_text(encoding="utf-8")
    ]
    assert offenders == []


def test_the_router_s_cards_reach_the_fusion_through_the_extension_point() -> None:
    from agents.chainrec.online.extensions import registered_tools
    from agents.chainrec.online.fusion import fusion_weights, with_fusion_weights
    from agents.router.catalog import METHOD_TOOLS
    from state.chainrec.context import ChainRecContext
    from state.router.context import RouterContext

    assert set(METHOD_TOOLS) <= set(registered_tools())
    weights = fusion_weights(RouterContext())
    assert weights["CollaborativeSignal"] == 2.0 and weights["IntentEvidence"] == 1.0
    assert fusion_weights(ChainRecContext())["CollaborativeSignal"] == 0.0  # no field: weighs 0
    assert (
        with_fusion_weights(RouterContext(), {"CollaborativeSignal": 0.5}).chainrec_weight_collaborative
        == 0.5
    )
