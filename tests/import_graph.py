"""The project's module import graph, read with `ast`, and its circles (tests/test_layers.py).

Every import counts: module-level ones, the lazy ones inside functions and those under
`TYPE_CHECKING`; relative imports are resolved against the importing module's package. A circle is a
strongly connected component of more than one module (Tarjan's algorithm, iterative).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path


def module_imports(source: str, package: str = "") -> set[str]:
    """Dotted names a module's source imports: `import a.b` gives `a.b`, `from a import b` gives
    `a.b` (a module or a name in `a`: `import_graph` keeps the longest prefix that is a module),
    with relative imports resolved against `package`, the importing module's package."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parents = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parents, base] if base else parents)
            found.update(f"{base}.{alias.name}" if alias.name != "*" else base for alias in node.names)
    return found


def project_modules(root: Path, packages: Iterable[str]) -> dict[str, Path]:
    """Dotted module name -> file, for every module of `packages` under `root` (a package's
    `__init__.py` under the package's own name)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def import_graph(root: Path, packages: Iterable[str]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (itself excluded)."""
    modules = project_modules(root, packages)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets = set()
        for imported in module_imports(path.read_text(encoding="utf-8"), package):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != name:
                targets.add(imported)
        graph[name] = targets
    return graph


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of `graph` (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            step = next(edges, None)
            if step is not None:
                if step not in index:
                    index[step] = low[step] = len(index)
                    stack.append(step)
                    on_stack.add(step)
                    work.append((step, iter(sorted(graph.get(step, ())))))
                elif step in on_stack:
                    low[node] = min(low[node], index[step])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def import_circles(root: Path, packages: Iterable[str]) -> list[list[str]]:
    """Every import circle among the modules of `packages` (each sorted; sorted by first module)."""
    components = strongly_connected(import_graph(root, packages))
    return sorted(component for component in components if len(component) > 1)
