"""Methods' `preload` hooks (graphs/registry.py), started in background threads when a bench run
starts and awaited just before each method's `prepare` hook.

A preload is heavy one-time loading (a model, dataset-wide arrays) that needs nothing from the run
but its context, so it can overlap the harness's own setup (dataset load, candidates, simulator)
instead of sitting on the method's critical path. Methods sharing one preload function and dataset
(a method and its ablations) share one thread. The wait is part of the method's setup time
(metrics.json `setup_seconds.prepare`); a preload's failure is raised there, in the main thread.

Imports stay in the main thread: a hook's module is imported by `start_preloads` before its thread
starts, so heavy packages belong at the top of that module. Two threads importing the same package
at once can fail with `_DeadlockError` when its modules import each other (scikit-learn's do).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphs.registry import METHODS, hook, method_context
from state.context import Context

_STARTED: dict[tuple[str, str], Preload] = {}
_LOCK = threading.Lock()


@dataclass
class Preload:
    """One preload function running (or run) for one dataset."""

    thread: threading.Thread
    """The daemon thread running it."""
    errors: list[BaseException] = field(default_factory=list)
    """Its failure, if it failed."""

    def wait(self) -> None:
        """Block until it is done; re-raise its failure."""
        self.thread.join()
        if self.errors:
            raise self.errors[0]


def _key(method: str, context: Context) -> tuple[str, str] | None:
    reference = METHODS[method].preload
    return (reference, context.dataset) if reference else None


def start_preloads(methods: Sequence[str], context: Context) -> None:
    """Start the preload of every method declaring one (each function and dataset once per process;
    `context` is the run's, each method's overrides applied)."""
    for method in methods:
        key = _key(method, context)
        if key is None:
            continue
        with _LOCK:
            if key in _STARTED:
                continue
            function = hook(method, "preload")
            ctx = method_context(method, context)
            errors: list[BaseException] = []

            def run(function=function, ctx=ctx, errors=errors) -> None:  # type: ignore[no-untyped-def]
                try:
                    function(ctx)
                except BaseException as error:  # re-raised by `wait_preload` in the main thread
                    errors.append(error)

            thread = threading.Thread(target=run, name=f"preload:{method}", daemon=True)
            _STARTED[key] = Preload(thread, errors)
            thread.start()


def settle_preloads(timeout: float = 120.0) -> None:
    """Wait (up to `timeout` seconds in all) for every preload thread still running. A command that
    stops early on bad input calls it before the process exits: a daemon thread cut off inside
    native code (onnxruntime, torch) at interpreter shutdown aborts the process ("terminate called
    without an active exception") instead of letting it exit with its one-line error."""
    deadline = time.monotonic() + timeout
    with _LOCK:
        running = [preload.thread for preload in _STARTED.values() if preload.thread.is_alive()]
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))


def wait_preload(method: str, context: Context) -> None:
    """Wait for `method`'s preload (started now if it was not), re-raising its failure."""
    key = _key(method, context)
    if key is None:
        return
    start_preloads([method], context)
    preload = _STARTED[key]
    try:
        preload.wait()
    except BaseException:
        with _LOCK:  # a failed preload is not remembered: the next run tries again
            _STARTED.pop(key, None)
        raise
