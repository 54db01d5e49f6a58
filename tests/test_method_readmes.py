"""The method READMEs follow the code: each method room's README (graphs/<room>/README.md) carries
its graphs as Mermaid blocks drawn from the compiled graphs, the table of its context class's own
knobs and the table of its registry entries, all generated (tests/method_readmes.py). README.md,
the links and the layers' docstrings: tests/test_documents.py.

The generated parts sit between `<!-- BEGIN GENERATED <key> -->` and `<!-- END GENERATED -->`.
Regenerate them after changing a graph, a context class or a spec:

    .venv/bin/python -m tests.test_method_readmes
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from graphs.registry import METHOD_PACKAGES, METHODS, SERVICE_GRAPHS
from tests.method_readmes import (
    REGENERATE,
    REPO,
    expected_blocks,
    found_blocks,
    knob_table,
    own_fields,
    regenerate,
    room_context,
    room_readme,
    stale_blocks,
    table_knobs,
)


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
