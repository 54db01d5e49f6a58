"""A paper's tables with our numbers beside the published ones (reproduce.md and reproduce.json).

Each published row keeps its place: a row whose method recgraph lacks says "not in recgraph", one the
run did not produce says "not run"; each block of a paper dataset says whether our dataset is that
one or differs from it (our numbers are shown either way, labelled)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from bench.reproduce.papers import Paper, Table
from graphs.registry import METHODS

STOPWORDS = frozenset({"and", "the", "of"})


def ours_label(llm: str) -> str:
    """What the "ours" columns measure under backend `llm`: heuristic runs measure the fallbacks,
    simulator runs check the pipeline; only a model's run measures the method."""
    if llm == "heuristic":
        return "ours: fallback answers, not the method"
    if llm == "sim":
        return "ours: pipeline check (simulator answers)"
    return "ours"


def _words(name: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", name.lower()) if len(w) >= 3 and w not in STOPWORDS}


def same_dataset(paper_dataset: str, ours: str) -> bool:
    """Whether our dataset's name names the paper's dataset (a word of one in the other's words)."""
    return bool(_words(paper_dataset) & _words(ours))


def row_status(method: str | None, missing: str, runs: Mapping[str, Mapping[str, Any]]) -> str:
    """ "" when our numbers exist, else why not."""
    if method is None:
        return missing
    if method not in METHODS:
        return f"not in recgraph ({method} is not registered)"
    if not any(method in (run.get("methods") or {}) for run in runs.values()):
        return "not run"
    return ""


def table_cells(table: Table, runs: Mapping[str, Mapping[str, Any]], dataset: str) -> list[dict[str, Any]]:
    """Per published row: its label, method, status and per column the published value, ours and
    our 95% interval (scaled like the paper's numbers)."""
    rows = []
    for row in table.rows:
        status = row_status(row.method, row.missing, runs)
        cells = []
        for column, value in zip(table.columns, row.values, strict=True):
            entry = ((runs.get(column.scenario) or {}).get("methods") or {}).get(row.method or "", {})
            ours, interval = entry.get(column.ours), entry.get(f"{column.ours}_ci")
            cells.append({
                "dataset": column.dataset, "scenario": column.scenario, "metric": column.metric,
                "published": value,
                "ours": None if ours is None else ours * table.scale,
                "ci95": None if not interval else [v * table.scale for v in interval],
                "dataset_matches": same_dataset(column.dataset, dataset),
            })  # fmt: skip
        rows.append(
            {"row": row.row, "method": row.method, "status": status, "note": row.note, "cells": cells}
        )
    return rows


def _ours(cell: Mapping[str, Any], status: str, digits: int) -> str:
    if cell["ours"] is None:
        return status or "—"
    text = f"{cell['ours']:.{digits}f}"
    if cell["ci95"]:
        text += f" [{cell['ci95'][0]:.{digits}f}, {cell['ci95'][1]:.{digits}f}]"
    return text


def table_markdown(table: Table, rows: list[dict[str, Any]], dataset: str, llm: str = "") -> str:
    """The table as Markdown, one block per paper dataset: each metric's published value and ours,
    headed by what ours measures under backend `llm` (`ours_label`)."""
    label = ours_label(llm)
    digits = 1 if table.scale != 1 else 4
    parts = [f"### {table.id}: {table.caption} (paper lines {table.lines})\n"]
    for name in table.datasets:
        index = [i for i, c in enumerate(table.columns) if c.dataset == name]
        match = same_dataset(name, dataset)
        verdict = "same dataset" if match else "dataset differs"
        parts.append(f"**{name}** (paper) vs **{dataset}** (ours): {verdict}\n")
        heads = [f"{table.columns[i].metric} {table.columns[i].scenario}" for i in index]
        lines = [
            "| paper row | recgraph method | "
            + " | ".join(f"{h} paper | {h} {label} [95% CI]" for h in heads)
            + " |",
            "|---" * (2 + 2 * len(index)) + "|",
        ]
        for row in rows:
            method = row["method"] or "—"
            cells = [
                (row["cells"][i]["published"], _ours(row["cells"][i], row["status"], digits)) for i in index
            ]
            shown = " | ".join(f"{p:g} | {o}" for p, o in cells)
            lines.append(f"| {row['row']} | {method} | {shown} |")
        parts.append("\n".join(lines) + "\n")
    notes = [f"- {row['row']} ({row['method']}): {row['note']}" for row in rows if row["note"]]
    if notes:  # how a mapped method differs from the paper's
        parts.append("\n".join(notes) + "\n")
    return "\n".join(parts)


def paper_report(
    paper: Paper, runs: Mapping[str, Mapping[str, Any]], dataset: str, header: list[str], llm: str = ""
) -> tuple[str, dict]:
    """reproduce.md's text and reproduce.json's document for a run (`runs`: scenario -> its
    metrics.json) under backend `llm`, whose label heads the "ours" columns."""
    document: dict[str, Any] = {"paper": paper.name, "title": paper.title, "dataset": dataset}
    document["ours_label"] = ours_label(llm)
    document.update(protocol=paper.protocol, omitted=paper.omitted, tables=[])
    parts = [f"# recgraph reproduce {paper.name}: {paper.title}\n", *(f"- {line}" for line in header), ""]
    for table in paper.tables:
        rows = table_cells(table, runs, dataset)
        document["tables"].append(
            {"id": table.id, "caption": table.caption, "lines": table.lines, "rows": rows}
        )
        parts.append(table_markdown(table, rows, dataset, llm))
    if paper.omitted:
        parts.append(f"Not transcribed: {paper.omitted}.\n")
    return "\n".join(parts), document
