"""One prepare step in a process of its own (bench/run/prepare_ahead.py starts them): the method
prepared as the parent would (bench/run/invoke.py `prepare_method`), timed in wall and CPU seconds,
its progress rows sent to the parent, its result (or failure) sent back."""

from __future__ import annotations

import os
import resource
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from multiprocessing.queues import Queue
from pathlib import Path
from typing import Any

from bench.run.prepare_plan import ITEM_VECTORS, PrepareStep
from graphs.hooks import Prepared
from world.heap import give_back
from world.progress import clocked, phase_seconds, reporting

_RELAY: Queue | None = None
"""The parent's queue for progress rows, in a prepare process (set by `start_process`)."""


@dataclass(frozen=True)
class RankedUsers:
    """The results log as a prepare step sees it: where the run's folder is, and the users of the
    step's method already ranked (read by the parent before the step started)."""

    path: Path
    """results.jsonl (its folder is the run's work folder)."""
    ranked: frozenset[str]
    """Users of the method already in the log."""

    def done(self, method: str) -> dict[str, None]:
        """The users already ranked, as `ResultsLog.done` gives them."""
        return dict.fromkeys(self.ranked)


@dataclass(frozen=True)
class StepResult:
    """What a prepare step sends back to the parent."""

    prepared: Prepared
    """The hook's result: the context to rank with and its metrics."""
    one_time_work: dict[str, float]
    """Seconds per phase: the world's (item vectors, indexes), then the hook's own."""
    wall_seconds: float
    """The step's wall-clock seconds in its process."""
    cpu_seconds: float
    """The CPU seconds its process spent on it (every thread)."""
    process_peak_rss_mb: float
    """The peak resident memory of its process so far (the process may have run earlier steps)."""
    process_rss_mb: float = 0.0
    """Its process's resident memory once the step was over and had given back what it freed."""

    def after(self, earlier: StepResult) -> StepResult:
        """This step's result with the work of a step that ran `earlier` for the same method added:
        its `prepare_ahead` step, or for that step one of its parts (`PrepareStep.part`). The
        method's one-time work is all of them (wall seconds summed, though parts may have run side
        by side; a phase both steps report, e.g. "user-memory vectors", also summed), and the figures
        of what the earlier step made (e.g. `planner_training`, not "reused") are its own."""
        metrics = {**self.prepared.metrics, **earlier.prepared.metrics}
        work = dict(earlier.one_time_work)
        for label, seconds in self.one_time_work.items():
            work[label] = work.get(label, 0.0) + seconds
        return replace(
            self,
            prepared=Prepared(self.prepared.context, metrics),
            one_time_work=work,
            wall_seconds=earlier.wall_seconds + self.wall_seconds,
            cpu_seconds=earlier.cpu_seconds + self.cpu_seconds,
            process_peak_rss_mb=max(earlier.process_peak_rss_mb, self.process_peak_rss_mb),
        )


def start_process(relay: Queue, parent_pid: int, llm_cache: str | None) -> None:
    """A prepare process's start: remember the parent's queue, tell it our pid, use the parent's
    LLM cache (`--llm-cache`) when it has one, and exit when the parent is gone; Ctrl-C is the
    parent's to handle."""
    from bench.run.worker_process import watch_parent

    if llm_cache:
        from agents.backends import enable_llm_cache

        enable_llm_cache(llm_cache)
    global _RELAY
    _RELAY = relay
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent(parent_pid)
    relay.put(("pid", os.getpid()))


def relay_row(name: str) -> Callable[[str, int, int], None]:
    """A reporter sending a step's rows to the parent, each label prefixed with `name` (the step's
    `row_prefix`)."""
    prefix = f"{name} · "

    def send(label: str, done: int, total: int) -> None:
        if _RELAY is not None:
            named = label if label.startswith(prefix) else prefix + label
            _RELAY.put(("phase", (named, done, total)))

    return send


def _embed_items(step: PrepareStep) -> Prepared:
    """The `ITEM_VECTORS` step: every evaluated user's visible history and candidates embedded."""
    from bench.run.item_prefetch import embed_case_items
    from world.environment import get_environment

    embed_case_items(get_environment(step.context.dataset), step.cases, step.protocol.scenario)
    return Prepared(step.context)


def run_step(step: PrepareStep) -> StepResult:
    """Prepare `step.method` in this process as the parent would (bench/run/invoke.py
    `prepare_method`), timing it; its failure goes back to the parent whole or as one line."""
    from bench.run.invoke import prepare_method, run_ahead_part
    from bench.run.worker_process import portable

    started, cpu = time.perf_counter(), time.process_time()
    send = relay_row(step.row_prefix)
    hook_phases, hook_clock = clocked(send)
    try:
        with reporting(send):
            log = RankedUsers(step.log_path, step.ranked)
            run = step.method, step.cases, step.protocol, log, step.concurrency, step.context
            if step.method == ITEM_VECTORS:
                prepared = _embed_items(step)
            elif step.part is not None:
                prepared = run_ahead_part(*run, step.part)  # type: ignore[arg-type]
            else:
                which = "prepare_ahead" if step.hook else "prepare"
                prepared = prepare_method(*run, hook_phases, which)  # type: ignore[arg-type]
    except BaseException as error:
        raise portable(error) from None
    finally:
        if _RELAY is not None:
            _RELAY.put(("end", step.row_prefix))
        give_back()  # the process lives on for the next step
    work = phase_seconds(since=started)
    prefix = f"{step.row_prefix} · "
    work.update((label.removeprefix(prefix), s) for label, s in hook_clock.seconds().items())
    peak = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)  # kB on Linux
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return StepResult(prepared, work, wall, cpu, peak, resident_mb())


def resident_mb() -> float:
    """This process's resident memory now, in MB (0 where /proc is not there)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except OSError:
        return 0.0
    return round(pages * os.sysconf("SC_PAGE_SIZE") / 2**20, 1)


def ahead_setup(result: StepResult) -> dict[str, Any]:
    """The `setup_seconds` figures of a step prepared ahead (the parent adds what it waited)."""
    return {
        "prepare": result.wall_seconds,
        "prepare_cpu": result.cpu_seconds,
        "prepared": "ahead",
        "one_time_work": result.one_time_work,
        "process_peak_rss_mb": result.process_peak_rss_mb,
        "process_rss_mb_after": result.process_rss_mb,
    }
