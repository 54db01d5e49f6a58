"""Imports point one way: recgraph → bench → graphs → agents → prompts/tools → state → world/llmsim,
and inside bench from room to room: reproduce/report → run → cost → stats → protocol.

Every import counts, including the lazy ones inside functions; `graph.invoke()` must never need
the evaluation harness (`bench`) or the CLI (`recgraph`). No module takes part in an import circle
(tests/import_graph.py builds the graph and finds its circles).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.import_graph import import_circles, module_imports

REPO = Path(__file__).resolve().parent.parent
LAYERS: dict[str, int] = {
    "world": 0,
    "llmsim": 0,
    "state": 1,
    "tools": 2,
    "prompts": 2,
    "agents": 3,
    "graphs": 4,
    "bench": 5,
    "recgraph": 6,
}
"""Package -> layer; a module may import its own package and packages of lower layers only."""
BENCH_ROOMS: dict[str, int] = {
    "protocol": 0,
    "stats": 1,
    "cost": 2,
    "run": 3,
    "report": 4,
    "reproduce": 4,
}
"""bench's rooms -> floor (bench/README.md); a module may import its own room and rooms on lower floors
only: the protocol (users, candidates, metrics, knobs), the statistics over per-user metrics, the
planned cost, the machinery that runs methods (and the cost probe, which runs it), then what reads a
finished run (reports) or plans several (reproduce)."""


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
    (tmp_path / "world" / "leak.py").write_text("def f():\n    from bench.protocol.plan import Protocol\n")
    (tmp_path / "tools" / "sideways.py").write_text("import prompts.common\n")
    (tmp_path / "graphs" / "fine.py").write_text("from agents.base import AgentTask\nimport numpy\n")
    expected = ["tools/sideways.py imports prompts", "world/leak.py imports bench"]
    assert sorted(violations(tmp_path)) == expected


def room_violations(root: Path) -> list[str]:
    """'file imports bench.room' for every import of a bench room on the same or a higher floor, and
    'file is loose' for a module at bench's top other than its `__init__.py`."""
    problems = []
    for path in sorted((root / "bench").rglob("*.py")):
        parts = path.relative_to(root / "bench").parts
        if len(parts) == 1:
            if parts[0] != "__init__.py":
                problems.append(f"{path.relative_to(root)} is loose")
            continue
        room = parts[0]
        for module in sorted(module_imports(path.read_text(encoding="utf-8"))):
            names = module.split(".")
            if names[0] != "bench" or len(names) < 2 or names[1] == room:
                continue
            if names[1] not in BENCH_ROOMS or BENCH_ROOMS[names[1]] >= BENCH_ROOMS[room]:
                problems.append(f"{path.relative_to(root)} imports bench.{names[1]}")
    return problems


def test_bench_rooms_point_down() -> None:
    rooms = {p.name for p in (REPO / "bench").iterdir() if (p / "__init__.py").is_file()}
    assert rooms == set(BENCH_ROOMS)
    assert room_violations(REPO) == []


def test_a_planted_room_import_is_caught(tmp_path: Path) -> None:
    for room in ("protocol", "run", "report"):
        (tmp_path / "bench" / room).mkdir(parents=True)
    (tmp_path / "bench" / "protocol" / "up.py").write_text("def f():\n    from bench.run import runner\n")
    (tmp_path / "bench" / "run" / "down.py").write_text("from bench.protocol.spec import Protocol\n")
    (tmp_path / "bench" / "report" / "side.py").write_text("import bench.reproduce.plan\n")
    (tmp_path / "bench" / "loose.py").write_text("")
    assert room_violations(tmp_path) == [
        "bench/loose.py is loose",
        "bench/protocol/up.py imports bench.run",
        "bench/report/side.py imports bench.reproduce",
    ]


def test_bench_and_the_simulator_keep_small_modules() -> None:
    """Every module of bench/ and llmsim/ under 300 lines (split by what it does past that)."""
    long = [
        f"{path.relative_to(REPO)}: {lines}"
        for package in ("bench", "llmsim")
        for path in sorted((REPO / package).rglob("*.py"))
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) >= 300
    ]
    assert long == []


def test_no_import_circles() -> None:
    assert import_circles(REPO, LAYERS) == []


def test_a_planted_circle_is_caught(tmp_path: Path) -> None:
    (tmp_path / "world").mkdir()
    (tmp_path / "world" / "__init__.py").write_text("")
    (tmp_path / "world" / "a.py").write_text("from world.b import thing\n")
    (tmp_path / "world" / "b.py").write_text("def thing():\n    from . import c\n")
    (tmp_path / "world" / "c.py").write_text("import world.a\nimport numpy\n")
    (tmp_path / "world" / "d.py").write_text("from world import a\n")
    assert import_circles(tmp_path, {"world": 0}) == [["world.a", "world.b", "world.c"]]


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
