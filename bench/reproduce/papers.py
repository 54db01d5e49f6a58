"""The papers' published numbers and protocols, one data file per paper, in its method's room
(`graphs/<paper>/published.json`).

A file holds the paper's datasets (the NAME `reproduce --dataset NAME=PATH` takes, the column
heading it fills, the data the paper used), its protocol (N, users, filters, candidate source, the
model it used, the knobs every run of it sets) and its main tables: per table its id, caption, the
lines of the paper's text it was read from, its columns (dataset, scenario, metric) and rows (the
paper's row label, the recgraph method it maps to or why it has none, and the values as printed;
`scale` 100 when the paper prints percentages).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from world.errors import RecgraphError

GRAPHS = Path(__file__).resolve().parents[2] / "graphs"
"""The method rooms' folder: `graphs/<paper>/published.json` is each paper's data file."""
PAPERS: tuple[str, ...] = ("memrec", "amem4rec", "arag", "chainrec")
"""The papers `recgraph reproduce` knows."""
METRIC_ALIASES = {"ndcg@1": "hit@1"}
"""Published metric -> the recgraph metric holding the same value (one relevant item: NDCG@1 = Hit@1)."""


class UnknownPaper(RecgraphError):
    """A PAPER argument that names no data file."""


class UnknownPaperDataset(RecgraphError):
    """A `--dataset NAME=PATH` whose NAME is none of the paper's datasets (or that lacks NAME=)."""


@dataclass(frozen=True)
class PaperDataset:
    """One of the paper's datasets: the name `reproduce --dataset NAME=PATH` takes for it."""

    name: str
    """The NAME reproduce takes (e.g. "CDs")."""
    column: str
    """The dataset as the paper's table columns name it (e.g. "CDs and Vinyl")."""
    data: str
    """The data the paper used (release, category)."""


@dataclass(frozen=True)
class Column:
    """One published column: on which dataset, in which scenario, which metric."""

    dataset: str
    """The paper's dataset name (e.g. "Books")."""
    scenario: str
    """The recgraph scenario that matches the paper's setting (world/scenarios.py)."""
    metric: str
    """The paper's metric, named as recgraph names it (hit@k, ndcg@k, avg_hr)."""

    @property
    def ours(self) -> str:
        """The key of metrics.json holding our value of this metric."""
        return METRIC_ALIASES.get(self.metric, self.metric)


@dataclass(frozen=True)
class Row:
    """One published row."""

    row: str
    """The paper's row label."""
    method: str | None
    """The recgraph method it maps to; None when recgraph has none (`missing` says why)."""
    values: tuple[float, ...]
    """The published values, one per column, as printed."""
    missing: str = ""
    """Why no recgraph method maps to it (e.g. "not in recgraph")."""
    note: str = ""
    """How the mapped method differs from the paper's, when it does."""


@dataclass(frozen=True)
class Table:
    """One published table."""

    id: str
    """The paper's table id, e.g. "Table 2"."""
    caption: str
    """Its caption, shortened."""
    lines: str
    """Lines of the paper's text file it was transcribed from."""
    columns: tuple[Column, ...]
    """Its columns."""
    rows: tuple[Row, ...]
    """Its rows, in the paper's order."""
    scale: float = 1.0
    """100 when the paper prints percentages (our values are multiplied by it)."""

    @property
    def scenarios(self) -> list[str]:
        """The scenarios its columns need, in order."""
        return list(dict.fromkeys(c.scenario for c in self.columns))

    @property
    def datasets(self) -> list[str]:
        """The paper's datasets its columns cover, in order."""
        return list(dict.fromkeys(c.dataset for c in self.columns))


@dataclass(frozen=True)
class Paper:
    """A paper's protocol and main tables."""

    name: str
    """The PAPER argument (memrec, amem4rec, arag, chainrec)."""
    title: str
    """The paper's title."""
    protocol: dict[str, Any]
    """candidates, users, min_interactions, candidate_source, llm (the paper's model) and a note."""
    tables: tuple[Table, ...]
    """Its main tables."""
    omitted: str = ""
    """What of the paper's results is not transcribed, and why."""
    datasets: tuple[PaperDataset, ...] = ()
    """The paper's datasets, in the order of its tables' columns."""

    @property
    def methods(self) -> list[str]:
        """Every recgraph method a row maps to, in table order."""
        return list(dict.fromkeys(r.method for t in self.tables for r in t.rows if r.method))

    @property
    def scenarios(self) -> list[str]:
        """Every scenario its tables need, in order."""
        return list(dict.fromkeys(s for t in self.tables for s in t.scenarios))

    def dataset(self, name: str) -> PaperDataset:
        """The paper's dataset called `name` (its NAME or its column heading, in any case; no
        partial or word match), else `UnknownPaperDataset` listing the names."""
        for entry in self.datasets:
            if name.casefold() in (entry.name.casefold(), entry.column.casefold()):
                return entry
        names = ", ".join(d.name for d in self.datasets)
        raise UnknownPaperDataset(f"{self.name} has no dataset {name!r}; choose one of {names}")

    def column_dataset(self, column: str) -> PaperDataset:
        """The dataset a table column names."""
        return next(d for d in self.datasets if d.column == column)


def check_paper(name: str) -> str:
    """`name` when a data file exists for it, else `UnknownPaper` listing the papers."""
    if name not in PAPERS:
        raise UnknownPaper(f"unknown paper {name!r}; choose one of {', '.join(PAPERS)}")
    return name


@cache
def load_paper(name: str) -> Paper:
    """The paper's data file, parsed and checked (each row has a value per column, and a method or
    the reason it has none)."""
    path = GRAPHS / check_paper(name) / "published.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    tables = tuple(_table(path, t) for t in data["tables"])
    datasets = tuple(PaperDataset(**d) for d in data["datasets"])
    named = {d.column for d in datasets}
    if unnamed := sorted({c.dataset for t in tables for c in t.columns} - named):
        raise RecgraphError(f'{path.name}: columns name datasets its "datasets" list lacks: {unnamed}')
    return Paper(name, data["title"], data["protocol"], tables, data.get("omitted", ""), datasets)


def _table(path: Path, data: dict[str, Any]) -> Table:
    columns = tuple(Column(**c) for c in data["columns"])
    rows = []
    for entry in data["rows"]:
        row = Row(
            entry["row"], entry["method"], tuple(float(v) for v in entry["values"]),
            entry.get("missing", ""), entry.get("note", ""),
        )  # fmt: skip
        where = f"{path.name}, {data['id']}, row {row.row!r}"
        if len(row.values) != len(columns):
            raise RecgraphError(f"{where}: {len(row.values)} values for {len(columns)} columns")
        if (row.method is None) == (not row.missing):
            raise RecgraphError(f"{where}: name a method or say why it is missing, not both or neither")
        rows.append(row)
    return Table(
        data["id"], data["caption"], data["lines"], columns, tuple(rows), float(data.get("scale", 1))
    )
