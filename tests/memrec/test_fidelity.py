"""graphs/memrec/FIDELITY.md stays true to the code: every `path.py:name` it cites is a file of the
repository that defines `name` at its top level (a function, a class or an assignment), every cited
`path` exists, and every MemRec row of the fidelity audit is in the table."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TABLE = REPO / "graphs" / "memrec" / "FIDELITY.md"
REFERENCE = re.compile(r"`([\w./-]+\.(?:py|json|md))(?::(\w+))?`")
AUDIT_ROWS = (
    "ranking order (audit)",
    "Vector configuration (audit",
    "Stage W inputs (audit",
    "neighbour update (audit",
    "recency rules on order-only data (audit)",
    "user memory M_u (audit)",
    "edges (audit)",
    "warm-up write (audit)",
    "RQ2 naive collaborative agent (audit)",
    "rationale judge (F.6, Fig. 5; audit)",
    "Table 5: Local, Ceiling, Cloud-OSS (audit)",
)
"""The audit's MemRec rows (shared/spec/fidelity-audit.md), as the table names them."""
VERDICTS = ("faithful", "simplified", "different", "missing", "(pending: other worker)", "–")


def top_level_names(path: Path) -> set[str]:
    """Names a module defines at its top level."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def table_rows(text: str) -> list[list[str]]:
    """The cells of every table row (header and separator rows left out)."""
    rows = []
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| component") and not line.startswith("|---"):
            rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def test_every_cited_file_and_name_exists() -> None:
    text = TABLE.read_text(encoding="utf-8")
    cited = REFERENCE.findall(text)
    assert len(cited) > 40
    problems = []
    for path, name in cited:
        file = REPO / path
        if not file.is_file():
            problems.append(f"{path}: no such file")
        elif name and name not in top_level_names(file):
            problems.append(f"{path} defines no {name}")
    assert problems == []


def test_every_row_has_a_verdict_and_every_non_faithful_one_a_reason() -> None:
    rows = table_rows(TABLE.read_text(encoding="utf-8"))
    assert rows and all(len(row) == 5 for row in rows), [row for row in rows if len(row) != 5]
    for component, _, _, verdict, reason in rows:
        assert verdict.startswith(VERDICTS), f"{component}: verdict {verdict!r}"
        if verdict.startswith(("simplified", "different", "missing")):
            assert reason or verdict == "missing", f"{component}: {verdict} without a reason"


def test_every_audit_row_is_in_the_table_and_the_readme_links_it() -> None:
    components = [row[0] for row in table_rows(TABLE.read_text(encoding="utf-8"))]
    for audit in AUDIT_ROWS:
        assert any(component.startswith(audit) for component in components), audit
    assert "(FIDELITY.md)" in (REPO / "graphs" / "memrec" / "README.md").read_text(encoding="utf-8")
