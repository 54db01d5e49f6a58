"""README.md stays short, keeps the two commands and labels its results as the heuristic backend's;
every relative link in the READMEs and docs/ points to a file that exists; no document cites an issue
number; and each layer's package docstring names the method rooms that layer has."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from graphs.registry import METHOD_PACKAGES
from tests.method_readmes import REPO, room_readme

README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 300
LAYERS = ("agents", "tools", "state", "prompts", "graphs", "world", "bench", "recgraph")
"""The packages whose `__init__.py` docstring describes the layer."""

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
ISSUE = re.compile(r"\b(?:issue|ticket)s?\s*#?\s*\d+", re.IGNORECASE)


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
