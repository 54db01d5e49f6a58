"""Imports point one way: recgraph → bench → graphs → agents → prompts/tools → state → world.

Every import counts, including the lazy ones inside functions; `graph.invoke()` must never need
the evaluation harness (`bench`) or the CLI (`recgraph`).
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LAYERS: dict[str, int] = {
    "world": 0,
    "state": 1,
    "tools": 2,
    "prompts": 2,
    "agents": 3,
    "graphs": 4,
    "bench": 5,
    "recgraph": 6,
}
"""Package -> layer; a module may import its own package and packages of lower layers only."""


def imported_packages(source: str) -> set[str]:
    """Top-level project packages a module imports (anywhere in it)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found.update(name.split(".")[0] for name in names if name.split(".")[0] in LAYERS)
    return found


def violations(root: Path) -> list[str]:
    """'file imports package' for every import that points up or sideways between layers."""
    problems = []
    for package, layer in LAYERS.items():
        for path in sorted((root / package).rglob("*.py")):
            for other in sorted(imported_packages(path.read_text(encoding="utf-8")) - {package}):
                if LAYERS[other] >= layer:
                    problems.append(f"{path.relative_to(root)} imports {other}")
    return problems


def test_imports_point_one_way() -> None:
    assert violations(REPO) == []


def test_a_planted_upward_import_is_caught(tmp_path: Path) -> None:
    for package in LAYERS:
        (tmp_path / package).mkdir()
    (tmp_path / "world" / "leak.py").write_text("def f():\n    from bench.protocol import Protocol\n")
    (tmp_path / "tools" / "sideways.py").write_text("import prompts.common\n")
    (tmp_path / "graphs" / "fine.py").write_text("from agents.base import AgentTask\nimport numpy\n")
    expected = ["tools/sideways.py imports prompts", "world/leak.py imports bench"]
    assert sorted(violations(tmp_path)) == expected


def test_graph_modules_import_without_the_harness() -> None:
    import subprocess
    import sys

    code = (
        "import sys, graphs.registry as r\n"
        "[r.resolve(s.graph) for s in r.METHODS.values()]\n"
        "[r.resolve(s.graph) for s in r.SERVICE_GRAPHS.values()]\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('bench', 'recgraph'))\n"
        "print(','.join(bad))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""
