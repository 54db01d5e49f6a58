"""The documentation follows the code: each method room's README (graphs/<room>/README.md) carries
its graphs as Mermaid blocks drawn from the compiled graphs, the table of its context class's own
knobs and the table of its registry entries, all generated; README.md stays short; every relative
link in the READMEs and docs/ points to a file that exists; and each layer's package docstring names
the method rooms that layer has.

The generated parts sit between `<!-- BEGIN GENERATED <key> -->` and `<!-- END GENERATED -->`.
Regenerate them after changing a graph, a context class or a spec:

    .venv/bin/python -m tests.test_method_readmes
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, fields
from pathlib import Path
from typing import Any

import pytest

from graphs.method_spec import MethodSpec
from graphs.registry import METHOD_PACKAGES, METHODS, SERVICE_GRAPHS, get_graph, service_graph
from state.context import Context

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 300
REGENERATE = "regenerate with: .venv/bin/python -m tests.test_method_readmes"

DRAWN: Mapping[str, tuple[str, ...]] = {
    "baselines": ("popularity", "vanilla_llm"),
    "arag": ("arag", "arag_no_nli", "arag_no_nli_csa"),
    "memrec": ("memrec", "memrec_write", "memrec_apply"),
    "amem4rec": ("amem4rec", "amem4rec_train", "amem4rec_commit"),
    "chainrec": ("chainrec",),
}
"""The graphs each room's README draws: a method's graph (by registry name) or a service graph.
MemRec's and AMEM4Rec's ablations share their method's graph; ARAG's ablations are graphs of their
own; one classic and one LLM baseline stand for the baselines (each is validate -> ranker)."""

LAYERS = ("agents", "tools", "state", "prompts", "graphs", "world", "bench", "recgraph")
"""The packages whose `__init__.py` docstring describes the layer."""

BLOCK = re.compile(r"<!-- BEGIN GENERATED (\S+) -->\n(.*?)\n?<!-- END GENERATED -->", re.DOTALL)
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
ISSUE = re.compile(r"\b(?:issue|ticket)s?\s*#?\s*\d+", re.IGNORECASE)


def room_readme(room: str) -> Path:
    """Where a method room's README lives."""
    return REPO / "graphs" / room / "README.md"


def room_spec(room: str) -> Any:
    """The room's `graphs/<room>/spec.py` module."""
    return importlib.import_module(f"graphs.{room}.spec")


def room_context(room: str) -> type[Context]:
    """The one context class every entry of the room declares."""
    classes = {spec.context for spec in room_spec(room).METHODS.values()}
    assert len(classes) == 1, f"graphs/{room}/spec.py: entries use several context classes {classes}"
    return classes.pop()


def drawn(room: str) -> tuple[str, ...]:
    """The graphs a room's README draws (a new room: its first method and its service graphs)."""
    spec = room_spec(room)
    return DRAWN.get(room) or (next(iter(spec.METHODS)), *spec.SERVICE_GRAPHS)


def own_fields(cls: type[Context]) -> list[Field[Any]]:
    """The fields a method's context class adds to the common `Context`, in declaration order."""
    common = {f.name for f in fields(Context)}
    return [f for f in fields(cls) if f.name not in common]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _value(value: Any) -> str:
    return '`""`' if value == "" else f"`{value!r}`".replace("'", '"')


def _default(f: Field[Any]) -> str:
    if f.default is not MISSING:
        return _value(f.default)
    if f.default_factory is not MISSING:
        return _value(f.default_factory())
    return "(required)"


def mermaid(name: str) -> str:
    """The Mermaid block of a method graph or a service graph, as the code draws it."""
    graph = get_graph(name) if name in METHODS else service_graph(name)
    return "```mermaid\n" + graph.get_graph().draw_mermaid().rstrip("\n") + "\n```"


def knob_table(cls: type[Context]) -> str:
    """The table of a context class's own knobs: name, default, description."""
    rows = ["| knob | default | what it sets |", "|---|---|---|"]
    for f in own_fields(cls):
        rows.append(f"| `{f.name}` | {_default(f)} | {_cell(f.metadata.get('description', ''))} |")
    return "\n".join(rows)


def _hook(value: Callable[..., Any] | str) -> str:
    if not value:
        return ""
    name = value if isinstance(value, str) else f"{value.__module__}:{value.__qualname__}"
    return f"`{name}`"


def entry_table(methods: Mapping[str, MethodSpec]) -> str:
    """The table of a room's registry entries: name, overrides, prepare hook, summary."""
    rows = ["| method | overrides | `prepare` hook | summary |", "|---|---|---|---|"]
    for name, spec in methods.items():
        overrides = ", ".join(f"`{key}={value!r}`" for key, value in spec.overrides.items())
        prepare = _hook(spec.prepare) or "–"
        rows.append(f"| `{name}` | {overrides or '–'} | {prepare} | {_cell(spec.summary)} |")
    return "\n".join(rows)


def expected_blocks(room: str) -> dict[str, str]:
    """Every generated block a room's README must hold, by key."""
    cls = room_context(room)
    blocks = {f"mermaid:{name}": mermaid(name) for name in drawn(room)}
    blocks[f"knobs:{cls.__name__}"] = knob_table(cls)
    blocks[f"entries:{room}"] = entry_table(room_spec(room).METHODS)
    return blocks


def found_blocks(text: str) -> dict[str, str]:
    """The generated blocks a README holds, by key."""
    return {key: body for key, body in BLOCK.findall(text)}


def stale_blocks(text: str, expected: Mapping[str, str]) -> list[str]:
    """What differs between a README's generated blocks and the expected ones."""
    found = found_blocks(text)
    problems = [f"missing block {key!r}" for key in expected if key not in found]
    problems += [f"unknown block {key!r}" for key in found if key not in expected]
    problems += [f"stale block {key!r}" for key in expected if key in found and found[key] != expected[key]]
    return problems


def regenerate(text: str, expected: Mapping[str, str]) -> str:
    """`text` with each generated block replaced by its expected content."""

    def replace(match: re.Match[str]) -> str:
        key = match.group(1)
        body = expected.get(key, match.group(2))
        return f"<!-- BEGIN GENERATED {key} -->\n{body}\n<!-- END GENERATED -->"

    return BLOCK.sub(replace, text)


def table_knobs(block: str) -> list[str]:
    """The knob names a knob table lists, in order."""
    return re.findall(r"^\| `([^`]+)` \|", block, re.MULTILINE)


def relative_links(text: str) -> list[str]:
    """Targets of the markdown links outside code blocks that point into the repository."""
    prose = FENCE.sub("", text)
    targets = [target for target in LINK.findall(prose) if not target.startswith("#")]
    return [target for target in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


def broken_links(path: Path, text: str) -> list[str]:
    """The relative links of `text` (the content of `path`) whose file does not exist."""
    broken = []
    for target in relative_links(text):
        file = target.split("#", 1)[0]
        if file and not (path.parent / file).exists():
            broken.append(f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path}: {target}")
    return broken


def documents() -> list[Path]:
    """README.md, every method room's README and docs/*.md."""
    return [README, *(room_readme(room) for room in METHOD_PACKAGES), *sorted(DOCS.glob("*.md"))]


def layer_docstring(layer: str) -> str:
    """The package docstring of a layer."""
    doc = importlib.import_module(layer).__doc__
    assert doc, f"{layer}/__init__.py has no docstring"
    return doc


def layer_rooms(layer: str) -> list[str]:
    """The method rooms a layer has (its sub-packages named after a method family)."""
    return [room for room in METHOD_PACKAGES if (REPO / layer / room / "__init__.py").is_file()]


@pytest.mark.parametrize("room", METHOD_PACKAGES)
def test_each_method_readme_holds_its_graphs_knobs_and_entries_as_the_code_has_them(room: str) -> None:
    path = room_readme(room)
    assert path.is_file(), f"{path.relative_to(REPO)} is missing"
    problems = stale_blocks(path.read_text(encoding="utf-8"), expected_blocks(room))
    assert problems == [], f"{path.relative_to(REPO)}: {'; '.join(problems)} ({REGENERATE})"


@pytest.mark.parametrize("room", METHOD_PACKAGES)
def test_each_knob_table_lists_exactly_the_context_class_s_own_fields(room: str) -> None:
    cls = room_context(room)
    block = found_blocks(room_readme(room).read_text(encoding="utf-8")).get(f"knobs:{cls.__name__}", "")
    listed, declared = table_knobs(block), [f.name for f in own_fields(cls)]
    assert declared, f"{cls.__name__} adds no knob of its own"
    assert listed == declared, (
        f"graphs/{room}/README.md lists {sorted(set(listed) ^ set(declared)) or 'the knobs in another order'}"
        f" differently from {cls.__name__} ({REGENERATE})"
    )


def test_every_registered_method_and_service_graph_is_in_its_room_s_readme() -> None:
    named: set[str] = set()
    for room in METHOD_PACKAGES:
        found = found_blocks(room_readme(room).read_text(encoding="utf-8"))
        named |= set(re.findall(r"^\| `([^`]+)` \|", found.get(f"entries:{room}", ""), re.MULTILINE))
        named |= {key.split(":", 1)[1] for key in found if key.startswith("mermaid:")}
    assert set(METHODS) <= named
    assert set(SERVICE_GRAPHS) <= named


def test_a_stale_or_missing_block_is_reported(tmp_path: Path) -> None:
    expected = {"mermaid:x": "```mermaid\ngraph TD;\n\ta --> b;\n```", "knobs:X": "| knob |\n|---|"}
    current = (
        "intro\n<!-- BEGIN GENERATED mermaid:x -->\n```mermaid\ngraph TD;\n\ta --> c;\n```\n"
        "<!-- END GENERATED -->\n<!-- BEGIN GENERATED other:y -->\nold\n<!-- END GENERATED -->\n"
    )
    assert stale_blocks(current, expected) == [
        "missing block 'knobs:X'",
        "unknown block 'other:y'",
        "stale block 'mermaid:x'",
    ]
    fixed = regenerate(current, expected)
    assert found_blocks(fixed)["mermaid:x"] == expected["mermaid:x"]
    assert fixed.startswith("intro\n") and "old" in fixed  # only known blocks are rewritten


def test_a_knob_table_missing_a_field_is_caught() -> None:
    cls = room_context("arag")
    table = knob_table(cls)
    first = own_fields(cls)[0].name
    without = "\n".join(line for line in table.splitlines() if f"`{first}`" not in line)
    assert table_knobs(table) == [f.name for f in own_fields(cls)]
    assert first not in table_knobs(without)


def test_readme_is_short_and_links_every_method_readme_and_doc() -> None:
    text = README.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= MAX_README_LINES, f"README.md has {lines} lines (at most {MAX_README_LINES})"
    links = set(relative_links(text))
    wanted = {f"graphs/{room}/README.md" for room in METHOD_PACKAGES}
    wanted |= {f"docs/{path.name}" for path in DOCS.glob("*.md")}
    assert sorted(wanted - links) == []


def test_the_readme_keeps_the_two_commands_and_labels_its_results_heuristic() -> None:
    text = README.read_text(encoding="utf-8")
    assert "make bench   # sets up .venv" in text and "make test    # sets up .venv" in text
    blocks = re.split(r"\n\s*\n", FENCE.sub("", text))
    tables = [block for block in blocks if block.lstrip().startswith("| method")]
    assert len(tables) == 1, "README.md shows exactly one results table"
    heading = text[: text.index(tables[0].strip())].rsplit("\n## ", 1)[-1]
    assert "heuristic backend" in heading.lower() and "no llm" in heading.lower()


def test_every_relative_link_points_to_a_file() -> None:
    broken = [link for path in documents() for link in broken_links(path, path.read_text(encoding="utf-8"))]
    assert broken == []


def test_a_broken_link_is_caught(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("x")
    text = (
        "[ok](there.md) [ok too](there.md#part) [web](https://example.org) [anchor](#top)\n"
        "[gone](missing.md)\n```\n[in code](nowhere.md)\n```\n"
    )
    assert broken_links(tmp_path / "README.md", text) == [f"{tmp_path / 'README.md'}: missing.md"]


def test_no_document_cites_an_issue_number() -> None:
    texts = {str(path.relative_to(REPO)): path.read_text(encoding="utf-8") for path in documents()}
    texts |= {f"{layer}/__init__.py": layer_docstring(layer) for layer in LAYERS}
    cited = {name: ISSUE.findall(text) for name, text in texts.items() if ISSUE.search(text)}
    assert cited == {}
    assert ISSUE.search("as asked in issue 15") and ISSUE.search("see Issue #3")


@pytest.mark.parametrize("layer", LAYERS)
def test_each_layer_docstring_names_its_method_rooms(layer: str) -> None:
    doc = layer_docstring(layer)
    missing = [room for room in layer_rooms(layer) if not re.search(rf"\b{room}\b", doc)]
    assert missing == [], f"{layer}/__init__.py's docstring does not name the room(s) {missing}"


def main() -> int:
    """Rewrite the generated blocks of every method README; print what changed."""
    for room in METHOD_PACKAGES:
        path = room_readme(room)
        text = path.read_text(encoding="utf-8")
        expected = expected_blocks(room)
        missing = [key for key in expected if key not in found_blocks(text)]
        if missing:
            print(f"{path.relative_to(REPO)}: add a block for {missing} (BEGIN/END GENERATED markers)")
        new = regenerate(text, expected)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"{path.relative_to(REPO)}: regenerated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
