"""The FIDELITY tables follow the code: every `graphs/<room>/FIDELITY.md` names the code behind each of
the paper's components as `path/to/file.py:name` (or a bare `path/to/file.py`), and each reference
must point to a file that exists and a name defined in it (a function, a class, a constant or a
dataclass field). Every row but a "missing" one cites such a reference, so no row's claim floats
free of the code it describes. Each table gives every row one of the four verdicts, with a reason for
every verdict but "faithful", and its method's README links it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TABLES = sorted((REPO / "graphs").glob("*/FIDELITY.md"))
VERDICTS = ("faithful", "simplified", "different", "missing")
REFERENCE = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|json|md))(?::([\w.]+))?`")


def defined_names(path: Path) -> set[str]:
    """Top-level functions, classes and assignments of a module, plus the methods and annotated fields
    of its classes, as `name` and `Class.name`."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.update({member.name, f"{node.name}.{member.name}"})
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    names.update({member.target.id, f"{node.name}.{member.target.id}"})
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def broken_references(text: str) -> list[str]:
    """The `path:name` references of a table that name no file or no definition in it."""
    broken = []
    for path_text, name in REFERENCE.findall(text):
        path = REPO / path_text
        if not path.is_file():
            broken.append(f"{path_text} (no such file)")
        elif name and path.suffix == ".py" and name not in defined_names(path):
            broken.append(f"{path_text}:{name} (not defined there)")
    return broken


def table_rows(text: str) -> list[dict[str, str]]:
    """The body rows of the Markdown tables in `text`, each as {header cell (lower case): cell}."""
    rows: list[dict[str, str]] = []
    header: list[str] = []
    for line in text.splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not header:
            header = [cell.lower() for cell in cells]
        elif not re.fullmatch(r"[\s:|-]+", line.strip().strip("|")):
            rows.append(dict(zip(header, cells, strict=False)))
    return rows


def test_the_memory_methods_have_tables() -> None:
    """MemRec and AMEM4Rec carry a FIDELITY table."""
    assert {p.parent.name for p in TABLES} >= {"memrec", "amem4rec"}


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.parent.name)
def test_references_name_code_that_exists(table: Path) -> None:
    """Every `path:name` a table cites is a file of the repository defining that name."""
    text = table.read_text()
    assert REFERENCE.search(text), "a FIDELITY table cites the code behind its rows"
    assert broken_references(text) == []


def rows_without_code(rows: list[dict[str, str]]) -> list[str]:
    """The first cell of every row that is not "missing" and cites no `path` or `path:name`."""
    return [
        next(iter(row.values()), "")
        for row in rows
        if row.get("verdict", "").strip("* ").lower() != "missing"
        and not REFERENCE.search(" ".join(row.values()))
    ]


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.parent.name)
def test_every_row_cites_the_code_it_describes(table: Path) -> None:
    """A row that says what the code does names that code (`path:name`), and the reference test
    above checks it resolves; only a "missing" row has no code to name."""
    assert rows_without_code(table_rows(table.read_text())) == []


def test_a_row_without_code_is_caught() -> None:
    """The checker itself: a faithful row with no reference is reported, a missing one is not."""
    rows = [
        {"component": "ranking", "verdict": "faithful", "reason": ""},
        {"component": "judge", "verdict": "missing", "reason": "not built"},
        {"component": "reader", "verdict": "simplified", "reason": "`agents/x.py:f` reads less"},
    ]
    assert rows_without_code(rows) == ["ranking"]


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.parent.name)
def test_every_row_has_a_verdict_and_reason(table: Path) -> None:
    """Each row's `verdict` cell is one of the four verdicts; a row that is not faithful gives its
    `reason`, and none is left pending."""
    rows = table_rows(table.read_text())
    assert rows and all("verdict" in row and "reason" in row for row in rows), (
        "every table has a verdict and a reason column"
    )
    for row in rows:
        verdict = row["verdict"].strip("* ").lower()
        assert verdict in VERDICTS, f"{row} has no verdict"
        assert not re.search(r"\bpending\b", " ".join(row.values()), re.I), f"a row left pending: {row}"
        if verdict != "faithful":
            assert len(row["reason"]) > 10, f"a deviation without its reason: {row}"


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.parent.name)
def test_the_method_readme_links_its_table(table: Path) -> None:
    """The method's README links FIDELITY.md."""
    assert "(FIDELITY.md)" in (table.parent / "README.md").read_text()


def test_a_broken_reference_is_caught() -> None:
    """The checker itself: a missing file and a name the file does not define are both reported."""
    text = (
        "`agents/nowhere.py:f` and `tests/test_fidelity_tables.py:no_such_name` and "
        "`tests/test_fidelity_tables.py:broken_references`"
    )
    assert broken_references(text) == [
        "agents/nowhere.py (no such file)",
        "tests/test_fidelity_tables.py:no_such_name (not defined there)",
    ]


def test_rows_are_read_by_their_header() -> None:
    """Two tables, the rule rows skipped, each body row keyed by its own table's header."""
    text = (
        "| a | Verdict | reason |\n|---|---|---|\n| x | faithful | |\n\n| verdict | reason |\n|--|--|\n"
        "| **different** | because it is |\n"
    )
    assert table_rows(text) == [
        {"a": "x", "verdict": "faithful", "reason": ""},
        {"verdict": "**different**", "reason": "because it is"},
    ]
