"""Where a bench run's one-time work went: each method's prepare step with its wall and CPU
seconds, where it ran (ahead, in a process of its own, or in order in the run's process) and its
longest phases; report.md's "One-time work" section and the console's line under the table."""

from __future__ import annotations

from typing import Any

SHOWN_SECONDS = 0.5
"""Steps shorter than this (wall) are left out of the table: a table of zeros says nothing."""
PHASES_SHOWN = 3
"""The longest phases named per step."""


def one_time_rows(methods: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per method whose prepare step took at least `SHOWN_SECONDS`: method, where, wall
    and CPU seconds, its longest phases."""
    rows = []
    for name, row in methods.items():
        setup = row.get("setup_seconds") or {}
        wall = setup.get("prepare") or 0.0
        if wall < SHOWN_SECONDS:
            continue
        phases = sorted((setup.get("one_time_work") or {}).items(), key=lambda item: -item[1])
        rows.append(
            {
                "method": name,
                "where": setup.get("prepared", "in order"),
                "wall": wall,
                "cpu": setup.get("prepare_cpu"),
                "phases": [(label, s) for label, s in phases[:PHASES_SHOWN] if s >= SHOWN_SECONDS],
            }
        )
    return rows


def totals(rows: list[dict[str, Any]]) -> tuple[float, float | None]:
    """The steps' wall seconds and CPU seconds, summed (what one process would have spent); CPU
    None when a step did not measure it (a run made before it was measured)."""
    cpu = [r["cpu"] for r in rows]
    return sum(r["wall"] for r in rows), None if None in cpu else sum(cpu)


def one_time_markdown(methods: dict[str, dict[str, Any]]) -> str:
    """report.md's section: the table of prepare steps and their sums, or "" when there are none."""
    rows = one_time_rows(methods)
    if not rows:
        return ""
    lines = [
        "### One-time work",
        "",
        "Each method's prepare step (training, warm-up, pools, planners). `ahead`: run in a process of "
        "its own while earlier methods were ranked (`--workers` ≥ 2); `in order`: in the run's "
        "process before its ranking. CPU counts every thread of the step's process. A method "
        "prepared in several steps (the learned router: its planner, and its training world's "
        "models beside other work) shows their sums.",
        "",
        "| method | prepared | wall s | CPU s | longest phases (s) |",
        "|---|---|---|---|---|",
    ]
    for row in rows:
        cpu = f"{row['cpu']:.1f}" if row["cpu"] is not None else "–"
        phases = ", ".join(f"{label} {s:.1f}" for label, s in row["phases"]) or "–"
        lines.append(f"| {row['method']} | {row['where']} | {row['wall']:.1f} | {cpu} | {phases} |")
    wall, cpu = totals(rows)
    lines.append(f"| **all steps** | | {wall:.1f} | {'–' if cpu is None else f'{cpu:.1f}'} | |")
    return "\n".join(lines)


def one_time_line(methods: dict[str, dict[str, Any]]) -> str:
    """The console's line: how many steps, their summed wall and CPU seconds, how many ran ahead."""
    rows = one_time_rows(methods)
    if not rows:
        return ""
    wall, cpu = totals(rows)
    ahead = sum(r["where"] == "ahead" for r in rows)
    cpu_text = "" if cpu is None else f" and {cpu:.0f} s CPU"
    return (
        f"one-time work: {len(rows)} prepare steps, {wall:.0f} s wall{cpu_text} summed, "
        f"{ahead} of them ahead in processes of their own (report.md: One-time work)"
    )
