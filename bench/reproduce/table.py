"""A paper's tables with our numbers beside the published ones (reproduce.md and reproduce.json).

Each published row keeps its place: a row whose method recgraph lacks says "not in recgraph", one the
run did not produce says "not run". Each column is filled only from its own paper dataset's run (the
`--dataset NAME=PATH` the user gave for it): a dataset without one says "not run"; each block names
the data that filled it. Nothing is matched by name."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.reproduce.papers import Paper, Table
from bench.reproduce.plan import run_folder, table_sample
from graphs.registry import METHODS

Runs = Mapping[str, Mapping[str, Any]]
"""Run folder under OUT (`run_folder`: NAME/scenario, or NAME/scenario-sample) -> its
metrics.json."""
Sources = Mapping[str, Mapping[str, str]]
"""Paper dataset NAME -> {"path": what the user gave, "dataset": the loaded dataset's name}."""
NOT_RUN = "not run"


def ours_label(llm: str) -> str:
    """What the "ours" columns measure under backend `llm`: heuristic runs measure the fallbacks,
    simulator runs check the pipeline; only a model's run measures the method."""
    if llm == "heuristic":
        return "ours: fallback answers, not the method"
    if llm == "sim":
        return "ours: pipeline check (simulator answers)"
    return "ours"


def row_status(method: str | None, missing: str, runs: Runs) -> str:
    """ "" when our numbers exist for some column, else why not (a method that ran but cannot run
    as published on the backend, e.g. an LLM planner without an LLM, says so: `not_run_reason`)."""
    if method is None:
        return missing
    if method not in METHODS:
        return f"not in recgraph ({method} is not registered)"
    entries = [run["methods"][method] for run in runs.values() if method in (run.get("methods") or {})]
    if not entries:
        return NOT_RUN
    reasons = [entry.get("not_run_reason") for entry in entries]
    return reasons[0] if all(reasons) else ""


def table_cells(paper: Paper, table: Table, runs: Runs) -> list[dict[str, Any]]:
    """Per published row: its label, method, status and per column the published value, ours and
    our 95% interval (scaled like the paper's numbers), from that column's dataset's run alone."""
    rows = []
    for row in table.rows:
        row_reason = row_status(row.method, row.missing, runs)
        cells = []
        sample = table_sample(paper, table.id)
        for column, value in zip(table.columns, row.values, strict=True):
            status = row_reason
            name = paper.column_dataset(column.dataset).name
            run = runs.get(run_folder(name, column.scenario, sample))
            entry = ((run or {}).get("methods") or {}).get(row.method or "", {})
            ours, interval = entry.get(column.ours), entry.get(f"{column.ours}_ci")
            if reason := entry.get("not_run_reason"):  # it ran, but not as published: no number
                ours, interval = None, None
                status = reason
            elif not entry and row.method in METHODS:  # this column's run lacks it (or was not run)
                status = NOT_RUN
            cells.append({
                "dataset": column.dataset, "scenario": column.scenario, "metric": column.metric,
                "published": value,
                "ours": None if ours is None else ours * table.scale,
                "ci95": None if not interval else [v * table.scale for v in interval],
                "status": status or ("" if ours is not None else NOT_RUN),
            })  # fmt: skip
        rows.append(
            {"row": row.row, "method": row.method, "status": row_reason, "note": row.note, "cells": cells}
        )
    return rows


def _ours(cell: Mapping[str, Any], digits: int) -> str:
    if cell["ours"] is None:
        return cell["status"] or "—"
    text = f"{cell['ours']:.{digits}f}"
    if cell["ci95"]:
        text += f" [{cell['ci95'][0]:.{digits}f}, {cell['ci95'][1]:.{digits}f}]"
    return text


def source_line(paper: Paper, column: str, sources: Sources) -> str:
    """Which data filled a paper dataset's columns, or that none did."""
    entry = paper.column_dataset(column)
    source = sources.get(entry.name)
    paper_side = f"**{column}** (paper: {entry.data})"
    if source is None:
        return f"{paper_side} · ours: {NOT_RUN} (`--dataset {entry.name}=PATH` fills it)"
    return f"{paper_side} · ours: `{source['dataset']}` from `{source['path']}`"


def block_runs(paper: Paper, table: Table, column: str, runs: Runs) -> dict[str, Mapping[str, Any]]:
    """A paper dataset's runs behind a table's block: scenario -> its metrics.json (runs made)."""
    name, sample = paper.column_dataset(column).name, table_sample(paper, table.id)
    found = {}
    for scenario in dict.fromkeys(c.scenario for c in table.columns if c.dataset == column):
        if run := runs.get(run_folder(name, scenario, sample)):
            found[scenario] = run
    return found


def cases_line(made: Mapping[str, Mapping[str, Any]]) -> str:
    """Where each scenario's cases of a block came from (a benchmark's task folder or recgraph's
    scenario rules), as its runs recorded it; "" before any run."""
    found = [
        f"{s}: {cases}" for s, run in made.items() if (cases := (run.get("candidates") or {}).get("cases"))
    ]
    return f"Cases: {'; '.join(found)}\n" if found else ""


def block_label(made: Mapping[str, Mapping[str, Any]], llm: str) -> str:
    """What a block's "ours" measures: under the backend its runs used (an OUT may hold datasets
    run under different backends), `llm` before any run."""
    used = {(run.get("protocol") or {}).get("llm") for run in made.values()} - {None}
    return " / ".join(ours_label(backend) for backend in sorted(used)) if used else ours_label(llm)


def evaluated_users(made: Mapping[str, Mapping[str, Any]]) -> str:
    """How many users a block's runs evaluated, as `120` or `95-120`; "" before any run."""
    counts = sorted(
        {int(n) for run in made.values() if (n := (run.get("candidates") or {}).get("evaluated"))}
    )
    return "" if not counts else str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"


def table_markdown(
    paper: Paper,
    table: Table,
    rows: list[dict[str, Any]],
    sources: Sources,
    llm: str = "",
    runs: Runs | None = None,
) -> str:
    """The table as Markdown, one block per paper dataset: each metric's published value and ours,
    headed by what ours measures under the backend its runs used (`llm` before any run) and by the
    data that filled it, where its cases came from and, for a named sample, how many users it had."""
    digits = 1 if table.scale != 1 else 4
    parts = [f"### {table.id}: {table.caption} (paper lines {table.lines})\n"]
    sample = table_sample(paper, table.id)
    if sample:  # the paper's later studies: a named user sample
        about = paper.protocol["samples"][sample]
        parts.append(f"Users: the `{sample}` sample ({about['users']} users): {about.get('note', '')}\n")
    for name in table.datasets:
        index = [i for i, c in enumerate(table.columns) if c.dataset == name]
        made = block_runs(paper, table, name, runs or {})
        parts.append(source_line(paper, name, sources) + "\n")
        if cases := cases_line(made):
            parts.append(cases)
        if sample and (count := evaluated_users(made)):
            parts.append(f"Users evaluated: {count} (all eligible when fewer than the sample)\n")
        label = block_label(made, llm)
        heads = [f"{table.columns[i].metric} {table.columns[i].scenario}" for i in index]
        lines = [
            "| paper row | recgraph method | "
            + " | ".join(f"{h} paper | {h} {label} [95% CI]" for h in heads)
            + " |",
            "|---" * (2 + 2 * len(index)) + "|",
        ]
        for row in rows:
            method = row["method"] or "—"
            cells = [(row["cells"][i]["published"], _ours(row["cells"][i], digits)) for i in index]
            shown = " | ".join(f"{p:g} | {o}" for p, o in cells)
            lines.append(f"| {row['row']} | {method} | {shown} |")
        parts.append("\n".join(lines) + "\n")
    notes = [f"- {row['row']} ({row['method']}): {row['note']}" for row in rows if row["note"]]
    if notes:  # how a mapped method differs from the paper's
        parts.append("\n".join(notes) + "\n")
    return "\n".join(parts)


def paper_report(
    paper: Paper, runs: Runs, sources: Sources, header: list[str], llm: str = ""
) -> tuple[str, dict]:
    """reproduce.md's text and reproduce.json's document for the runs under OUT (`runs`, `sources`)
    under backend `llm`, whose label heads the "ours" columns."""
    document: dict[str, Any] = {"paper": paper.name, "title": paper.title}
    document["datasets"] = {
        d.name: {"column": d.column, "paper_data": d.data, "ours": sources.get(d.name)}
        for d in paper.datasets
    }
    document["ours_label"] = ours_label(llm)
    document.update(protocol=paper.protocol, omitted=paper.omitted, tables=[])
    parts = [f"# recgraph reproduce {paper.name}: {paper.title}\n", *(f"- {line}" for line in header), ""]
    for table in paper.tables:
        rows = table_cells(paper, table, runs)
        document["tables"].append(
            {"id": table.id, "caption": table.caption, "lines": table.lines, "rows": rows}
        )
        parts.append(table_markdown(paper, table, rows, sources, llm, runs))
    if paper.omitted:
        parts.append(f"Not transcribed: {paper.omitted}.\n")
    return "\n".join(parts), document
