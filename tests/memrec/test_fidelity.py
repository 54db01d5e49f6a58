"""graphs/memrec/FIDELITY.md names every MemRec row of the fidelity audit (its references, verdicts and
reasons are checked for every room by tests/test_fidelity_tables.py)."""

from __future__ import annotations

from pathlib import Path

from tests.test_fidelity_tables import table_rows

TABLE = Path(__file__).resolve().parents[2] / "graphs" / "memrec" / "FIDELITY.md"
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


def test_every_audit_row_is_in_the_table() -> None:
    """Each audit row is a component of the table."""
    components = [row.get("component", "") for row in table_rows(TABLE.read_text(encoding="utf-8"))]
    missing = [audit for audit in AUDIT_ROWS if not any(c.startswith(audit) for c in components)]
    assert missing == []
