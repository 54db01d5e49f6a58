"""The simulator's fault table: what it injected next to what the client observed."""

from __future__ import annotations

from typing import Any

from rich.table import Table

from llmsim.injection import SYMPTOMS

OBSERVED_AS = {
    "http_429": ("errors", "http_429"),
    "http_500": ("errors", "http_500"),
    "timeout": ("errors", "timeout"),
    "malformed_json": ("errors", "malformed_json"),
    "truncated": ("errors", "truncated"),
    "unknown_ids": ("repair_kinds", "unknown_id"),
    "duplicate_ids": ("repair_kinds", "duplicate_id"),
}
"""Simulator fault kind -> where the client counts it (echo is a valid answer: not seen)."""


def observed_faults(methods: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Client-side counts of each simulator fault kind, over all methods."""
    counts = dict.fromkeys(OBSERVED_AS, 0)
    for method_row in methods.values():
        # Calls made before ranking count too: MemRec's warm-up writes, this run's training calls,
        # and the training calls a router's prerequisites made in this run (AgentCF's memories when
        # the router trained them first). A prerequisite's `stage_w` is left out: it reports the
        # shared memory's whole log, which the MemRec row it belongs to counts already.
        prerequisites = (method_row.get("prerequisites") or {}).values()
        before = (
            method_row.get("stage_w") or {},
            (method_row.get("training") or {}).get("this_run") or {},
            *((figures.get("training") or {}).get("this_run") or {} for figures in prerequisites),
        )
        for row in (method_row, *before):
            for kind, (table, key) in OBSERVED_AS.items():
                counts[kind] += row.get(table, {}).get(key, 0)
    return counts


def fault_table(server_stats: dict[str, Any], methods: dict[str, dict[str, Any]]) -> Table:
    """Faults the simulator injected next to what the client observed."""
    table = Table(title=f"simulator: {server_stats.get('requests', 0)} requests")
    for column in ("fault", "injected", "observed by client"):
        table.add_column(column)
    observed = observed_faults(methods)
    modes = server_stats.get("injection_modes") or {}
    through = {kind: modes.get(mode, 0) for mode, kind in SYMPTOMS.items()}
    for kind, injected in sorted(server_stats.get("faults", {}).items()):
        shown = observed.get(kind, "not observable")
        if kind == "injection" and modes:
            shown = f"{modes.get('first', 0)} not observable (item put first); the rest: see their symptoms"
        elif through.get(kind):  # obeyed injections show the same symptom as this kind
            injected = f"{injected} + {through[kind]} by injection"
        table.add_row(kind, str(injected), str(shown))
    return table
