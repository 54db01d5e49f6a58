"""Paired comparisons from results.jsonl records: a bench run against its reference method,
and `recgraph compare RUN_A RUN_B` (two finished runs, user by user, method by method).

Two runs are comparable when their protocols are equal in everything but the seed and the
`--set` knobs (dataset, scenario, candidates, users and llm must match; a knob sweep compares runs
that differ in `set`, said in a warning). Different seeds select different
users, and give a user different negatives, so the comparison is paired over the users
both runs evaluated, with a warning saying how many; the difference is B − A.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from bench.protocol.metrics import metric_order
from bench.stats import significance as stats
from world.errors import ProtocolError, RecgraphError

MAY_DIFFER = ("seed", "set")
"""Protocol fields two compared runs may differ in (`set`: the `--set` knobs, what a sweep varies)."""


class UnknownReferenceError(RecgraphError):
    """`--reference` names a method that is not in the run."""


class RunFolderError(RecgraphError):
    """A folder that holds no readable `recgraph bench` results."""


class RunMismatchError(ProtocolError):
    """Two runs whose protocols differ in more than the seed."""


class _Log(Protocol):
    def done(self, method: str) -> Mapping[str, Mapping[str, Any]]: ...


class _Case(Protocol):
    user_id: str


def check_reference(reference: str | None, methods: Sequence[str]) -> None:
    """Refuse `--reference M` before a run starts unless M is one of `methods`."""
    if reference and reference not in methods:
        raise UnknownReferenceError(
            f"--reference {reference!r} is not among the methods run ({', '.join(methods)})"
        )


def add_statistics(
    results: dict[str, dict[str, Any]], log: _Log, cases: Iterable[_Case], reference: str | None = None
) -> dict[str, Any]:
    """Put `<metric>_ci` beside every metric of `results` and return metrics.json's `comparisons`.

    Intervals and comparisons use the per-user records in `log` of the users in `cases`.
    The reference is `reference` or the strongest classic baseline in the run (by ndcg@5).
    """
    from graphs.registry import METHODS

    rows = per_user_rows(results, log, cases)
    for method in results:
        results[method] = stats.with_intervals(results[method], stats.metric_intervals(rows[method]))
    kinds = {m: METHODS[m].kind for m in results if m in METHODS}
    try:
        chosen, how = stats.choose_reference(results, kinds, reference)
    except ValueError as error:
        raise UnknownReferenceError(str(error)) from None
    return reference_comparisons(rows, chosen, how)


def per_user_rows(results: Mapping[str, Any], log: _Log, cases: Iterable[_Case]) -> dict[str, stats.Rows]:
    """method -> user id -> per-user metrics, for the methods of `results` and the users of `cases`."""
    wanted = {case.user_id for case in cases}
    return {m: {u: r["metrics"] for u, r in log.done(m).items() if u in wanted} for m in results}


def reference_comparisons(rows: Mapping[str, stats.Rows], reference: str | None, how: str) -> dict[str, Any]:
    """The `comparisons` block: every other method against `reference` on `stats.COMPARED`."""
    block: dict[str, Any] = {"reference": reference, "reference_chosen": how, "methods": {}}
    if reference is None or not rows.get(reference):
        return block
    metrics = [m for m in metric_names(rows[reference]) if m in stats.COMPARED]
    pairs = {m: (r, rows[reference]) for m, r in rows.items() if m != reference and r}
    table = stats.compare_all(pairs, metrics)
    block["methods"] = {m: {k: p.as_dict() for k, p in row.items()} for m, row in table.items()}
    return block


def metric_names(rows: stats.Rows) -> list[str]:
    """The metric names of the first user in `rows`, in report order."""
    first = next(iter(rows.values()), {})
    return metric_order(first)


@dataclass
class Run:
    """A finished (or partly finished) `recgraph bench` run, read only."""

    path: Path
    """Its results.jsonl."""
    protocol: dict[str, Any]
    """The protocol it was run with."""
    rows: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)
    """method -> user id -> per-user metrics."""
    partial_line: bool = False
    """The file ends with a half-written line (ignored)."""


def load_run(folder: str | Path) -> Run:
    """Read `<folder>/results.jsonl` (or that file itself) without changing it."""
    path = Path(folder)
    file = path if path.is_file() else path / "results.jsonl"
    if not file.is_file():
        raise RunFolderError(f"{path}: no results.jsonl there (expected a `recgraph bench --out` folder)")
    lines = file.read_text(encoding="utf-8").split("\n")
    partial = lines.pop()  # "" when the file ends with a newline, else a line cut by a crash
    protocol: dict[str, Any] | None = None
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise RunFolderError(f"{file}, line {number}: not valid JSON ({error})") from None
        found = record.get("protocol")
        if found is not None and protocol is None:
            protocol = found
        elif found is not None and found != protocol:
            raise RunFolderError(f"{file}, line {number}: a second protocol in one results file ({found})")
        if "method" in record and "metrics" in record:  # a per-user record (else: the header)
            rows.setdefault(record["method"], {})[str(record["user_id"])] = record["metrics"]
    if protocol is None:
        raise RunFolderError(f"{file}: no protocol recorded (not a `recgraph bench` results file)")
    return Run(file, protocol, rows, bool(partial.strip()))


def check_protocols(a: Run, b: Run) -> None:
    """Refuse two runs whose protocols differ in anything but the seed, naming the differences."""
    keys = [*a.protocol, *(k for k in b.protocol if k not in a.protocol)]
    differ = [k for k in keys if k not in MAY_DIFFER and a.protocol.get(k) != b.protocol.get(k)]
    if differ:
        detail = "; ".join(f"{k}: {a.protocol.get(k)!r} vs {b.protocol.get(k)!r}" for k in differ)
        raise RunMismatchError(
            f"cannot compare {a.path.parent} and {b.path.parent}: their protocols differ in {detail} "
            f"(only --seed may differ)"
        )


@dataclass
class MethodComparison:
    """One method in both runs."""

    users_a: int
    users_b: int
    paired: int
    """Users evaluated in both runs."""
    mean_a: dict[str, float]
    """Run A's mean of each metric over the paired users."""
    mean_b: dict[str, float]
    """Run B's mean over the paired users."""
    metrics: dict[str, stats.Paired]
    """B − A per metric."""


@dataclass
class RunComparison:
    """`recgraph compare`'s result."""

    a: Run
    b: Run
    methods: dict[str, MethodComparison]
    warnings: list[str]


def _means(rows: stats.Rows, users: Sequence[str], metrics: Sequence[str]) -> dict[str, float]:
    return {m: math.fsum(rows[u][m] for u in users) / len(users) for m in metrics}


def run_metrics(run: Run) -> list[str]:
    """The per-user metric names a run recorded."""
    rows = next(iter(run.rows.values()), {})
    return metric_names(rows)


def compare_runs(a: Run, b: Run, metrics: Sequence[str] | None = None) -> RunComparison:
    """Compare run B with run A user by user for every method both hold (Holm across methods).

    `metrics` defaults to `stats.COMPARED` (those both runs have).
    """
    check_protocols(a, b)
    warnings = [f"{r.path}: its half-written last line is ignored" for r in (a, b) if r.partial_line]
    only_a, only_b = [m for m in a.rows if m not in b.rows], [m for m in b.rows if m not in a.rows]
    if only_a or only_b:
        warnings.append(f"not compared (in one run only): A {only_a or '-'}; B {only_b or '-'}")
    common = {m: sorted(set(a.rows[m]) & set(b.rows[m])) for m in a.rows if m in b.rows}
    empty = [m for m, users in common.items() if not users]
    if empty:
        warnings.append(f"no user in both runs for {', '.join(empty)}: not compared")
    common = {m: users for m, users in common.items() if users}
    if not common:
        raise RunMismatchError(
            f"nothing to compare: no method with users in both {a.path.parent} and {b.path.parent}"
        )
    warnings += _pairing_warnings(a, b, common)
    available = [k for k in run_metrics(a) if k in run_metrics(b)]
    metrics = [k for k in (metrics or stats.COMPARED) if k in available]
    table = stats.compare_all({m: (b.rows[m], a.rows[m]) for m in common}, metrics)
    methods = {
        m: MethodComparison(
            users_a=len(a.rows[m]),
            users_b=len(b.rows[m]),
            paired=len(users),
            mean_a=_means(a.rows[m], users, metrics),
            mean_b=_means(b.rows[m], users, metrics),
            metrics=table[m],
        )
        for m, users in common.items()
    }
    return RunComparison(a, b, methods, warnings)


def _pairing_warnings(a: Run, b: Run, common: Mapping[str, Sequence[str]]) -> list[str]:
    """Say how many users are paired when the runs did not evaluate exactly the same users."""
    lines = []
    if a.protocol.get("set") != b.protocol.get("set"):
        lines.append(f"--set differs: A {a.protocol.get('set') or '-'}; B {b.protocol.get('set') or '-'}")
    if a.protocol.get("seed") != b.protocol.get("seed"):
        lines.append(
            f"seeds differ ({a.protocol.get('seed')} vs {b.protocol.get('seed')}): the runs sampled "
            "different users and negatives; pairing over the users both evaluated"
        )
    groups: dict[tuple[int, int, int], list[str]] = {}
    for method, users in common.items():
        groups.setdefault((len(users), len(a.rows[method]), len(b.rows[method])), []).append(method)
    for (paired, n_a, n_b), methods in groups.items():
        if not n_a == n_b == paired:
            who = "every method" if len(groups) == 1 else ", ".join(methods)
            lines.append(
                f"pairing {paired} user{'s' * (paired != 1)} common to both runs for {who} "
                f"(A has {n_a}, B has {n_b})"
            )
    return lines
