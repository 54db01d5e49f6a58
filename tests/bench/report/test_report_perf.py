"""What `recgraph bench` does after its last user, timed: statistics (intervals, paired comparisons),
metrics.json, report.md, report.png (with its quality–cost panels) and the console report, for 24
methods × 200 users, matplotlib imported beforehand as the run does (`preload_plotting`). Target:
≤ 1.5 s. Run: `.venv/bin/pytest tests/bench/report/test_report_perf.py -m perf -s` (note the load, `uptime`).
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

import pytest
from rich.console import Console

from bench.cost.planned_calls import call_plan_entry
from bench.protocol.metrics import mean_metrics, user_metrics
from bench.report import console as report_console
from bench.report import outputs as report
from bench.stats.compare import add_statistics
from graphs.registry import METHODS
from state.context import Context

pytestmark = pytest.mark.perf
USERS = 200
METHOD_COUNT = 24
TARGET_SECONDS = 1.5


class Log:
    """Per-user records of every method (what add_statistics reads of a ResultsLog)."""

    def __init__(self, methods: list[str]) -> None:
        rng = random.Random(0)
        self.records = {
            m: {f"u{i:03d}": {"metrics": user_metrics(rng.randint(1, 10), 10)} for i in range(USERS)}
            for m in methods
        }

    def done(self, method: str) -> dict:
        """The method's records by user."""
        return self.records[method]


class Case:
    """A user under test."""

    def __init__(self, user_id: str) -> None:
        self.user_id = user_id


def results(log: Log, llm: str) -> dict[str, dict]:
    """metrics.json's method rows as the runner makes them, with usage as `llm` would record it."""
    rows = {}
    for method, records in log.records.items():
        plan = call_plan_entry(method, Context(), 10)
        calls = (plan or {"per_user": 0})["per_user"] * USERS if llm != "heuristic" else 0
        rows[method] = {
            **mean_metrics(r["metrics"] for r in records.values()),
            "users": USERS,
            "llm_calls": calls,
            "input_tokens": 900 * calls,
            "output_tokens": 150 * calls,
            "tokens_estimated": False,
            "call_plan": plan,
        }
    return rows


@pytest.mark.parametrize("llm", ["heuristic", "sim"])
def test_reports_after_the_last_user_take_at_most_a_second_and_a_half(tmp_path: Path, llm: str) -> None:
    report.preload_plotting().join()
    log = Log(list(METHODS)[:METHOD_COUNT])
    cases = [Case(f"u{i:03d}") for i in range(USERS)]
    methods = results(log, llm)
    protocol = {"candidates": 10, "seed": 0, "scenario": "classic", "users": USERS, "llm": llm}
    console = Console(record=True, width=120)
    started, cpu = time.perf_counter(), time.process_time()
    comparisons = add_statistics(methods, log, cases)
    statistics = time.perf_counter() - started
    report.write_metrics(tmp_path, "ml-100k", protocol, methods, None, comparisons)
    report.write_report_md(tmp_path, "ml-100k", protocol, methods, comparisons)
    before_png = time.perf_counter()
    report.write_report_png(tmp_path, "ml-100k", protocol, methods, comparisons)
    png = time.perf_counter() - before_png
    console.print(report_console.rich_report("ml-100k", protocol, methods, comparisons))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    load = os.getloadavg()[0]
    print(
        f"\n{llm}: {seconds:.3f} s after the last user (statistics {statistics:.3f}, report.png "
        f"{png:.3f}; CPU {cpu:.3f} s), load {load:.2f}"
    )
    assert seconds <= TARGET_SECONDS
