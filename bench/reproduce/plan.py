"""Which bench runs a paper needs: per paper dataset given, one per scenario that dataset's columns
use, each with the methods of the tables having such a column that recgraph registers (looked up in
`graphs.registry.METHODS` when asked, so a method another helper adds later is picked up), and the
knobs of the paper's protocol plus the user's `--set`, each passed to the runs it applies to."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bench.reproduce.papers import Paper, PaperDataset, UnknownPaperDataset
from graphs.registry import METHODS


def run_folder(dataset: str, scenario: str, sample: str = "") -> str:
    """A run's output folder under OUT: NAME/scenario, a named sample's runs beside the main ones
    (NAME/scenario-sample)."""
    return f"{dataset}/{scenario}" + (f"-{sample}" if sample else "")


@dataclass(frozen=True)
class ScenarioRun:
    """One `recgraph bench` run of a reproduction."""

    dataset: str
    """The paper dataset's NAME (its folder under OUT)."""
    scenario: str
    """The scenario (world/scenarios.py)."""
    methods: tuple[str, ...]
    """The registered methods of the tables with a column on this dataset in this scenario."""
    sample: str = ""
    """The paper's named user sample its tables use (`protocol.samples`), "" for the main one."""

    @property
    def folder(self) -> str:
        """Its output folder under OUT (`run_folder`)."""
        return run_folder(self.dataset, self.scenario, self.sample)

    def users(self, paper: Paper) -> int | str:
        """The paper's users for this run: its sample's size, else the protocol's (a count or "all")."""
        if self.sample:
            return paper.protocol["samples"][self.sample]["users"]
        return paper.protocol["users"]


def dataset_arguments(paper: Paper, given: Sequence[str]) -> dict[str, str]:
    """Each `--dataset NAME=PATH` as paper-dataset NAME -> PATH, in the order given; a value without
    `NAME=`, a NAME the paper lacks or a NAME given twice is `UnknownPaperDataset`."""
    names = ", ".join(d.name for d in paper.datasets)
    chosen: dict[str, str] = {}
    for text in given:
        name, equals, path = text.partition("=")
        if not equals or not name.strip() or not path.strip():
            raise UnknownPaperDataset(
                f"--dataset {text!r}: give NAME=PATH, NAME one of {paper.name}'s datasets ({names})"
            )
        entry = paper.dataset(name.strip())
        if entry.name in chosen:
            raise UnknownPaperDataset(f"--dataset {entry.name} is given twice")
        chosen[entry.name] = path.strip()
    return chosen


def table_sample(paper: Paper, table: str) -> str:
    """The named user sample (`protocol.samples`) a table's runs use, "" for the protocol's users."""
    samples = paper.protocol.get("samples") or {}
    return next((name for name, sample in samples.items() if table in sample.get("tables", ())), "")


def dataset_runs(paper: Paper, dataset: PaperDataset) -> list[ScenarioRun]:
    """The bench runs one paper dataset needs, in the order its tables first use each (scenario,
    user sample)."""
    cells = [
        (t, (c.scenario, table_sample(paper, t.id))) for t in paper.tables for c in t.columns
        if c.dataset == dataset.column
    ]  # fmt: skip
    runs = []
    for scenario, sample in dict.fromkeys(key for _, key in cells):
        tables = [t for t, key in cells if key == (scenario, sample)]
        wanted = [r.method for t in tables for r in t.rows if r.method in METHODS]
        methods = tuple(dict.fromkeys(m for m in wanted if m))
        runs.append(ScenarioRun(dataset.name, scenario, methods, sample))
    return runs


def missing_methods(paper: Paper) -> list[str]:
    """Methods the paper's rows map to that recgraph does not register (yet)."""
    return [m for m in paper.methods if m not in METHODS]


def knob_assignments(paper: Paper, given: Sequence[str]) -> list[str]:
    """The paper's protocol knobs (`protocol.knobs` in published.json) as `NAME=VALUE`, each
    replaced by a `--set` of the same NAME."""
    from bench.protocol.knob_settings import split_assignment

    knobs = {name: str(value) for name, value in (paper.protocol.get("knobs") or {}).items()}
    knobs.update(split_assignment(text) for text in given)
    return [f"{name}={value}" for name, value in knobs.items()]


def run_knobs(assignments: Sequence[str], run: ScenarioRun) -> list[str]:
    """The assignments some method of `run` has a knob for (bench refuses one no method has)."""
    from bench.protocol.knob_settings import knob_types, split_assignment

    having = {n for m in run.methods for n in knob_types(METHODS[m].context)}
    return [text for text in assignments if split_assignment(text)[0] in having]


def filter_note(paper: Paper, given: int | None) -> str:
    """The paper's user filter (`min_interactions`: users with at least that many interactions), as
    applied through world/filters.py's `--min-user-interactions` to every scenario but cold_start
    (whose users have 2-3 interactions by definition); `given` overrides it (0: off)."""
    k = paper.protocol.get("min_interactions") if given is None else given
    if not k:
        return "no user filter" if paper.protocol.get("min_interactions") else ""
    return f"user filter: at least {k} interactions (--min-user-interactions {k}; not in cold_start)"
