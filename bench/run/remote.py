"""`recgraph bench --server URL[,URL…]`: every user's run on a LangGraph deployment.

`RemotePool` stands where `bench --workers`' `WorkerPool` stands in the runner (bench/run/runner.py): the
runner prepares each method through `RemotePool.prepare` and ranks it through `RemotePool.rank`.
Everything else is the in-process benchmark's: the client plans the cases, sends each user's
`RecInput` with the run's `Context` (the method's overrides applied) and the tracing config, scores
the returned ranking with `result_record`, and is the only writer of results.jsonl, so the reports,
intervals and resume are the same.

A method's prepare step writes state its served graph reads (MemRec's memory graph, AMEM4Rec's
pool), so under `--server` it runs on the deployment too: the method's `remote_prepare` hook drives
the deployment's service assistants (`memrec_write`, `amem4rec_train`, ...) through the same
replicas. A method with a `prepare` hook but no remote variant (the learned ChainRec planner, whose
checkpoint is a local file) is refused in one line before any work. A method without a prepare hook
needs nothing shared and runs as is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from bench.protocol.spec import EvalCase, Protocol
from bench.run.crash import MethodCrashed, is_crash
from bench.run.invoke import PhaseProgress, ProgressHook, prepare_request
from bench.run.records import result_record
from bench.run.remote_checks import check_remote_methods, connect
from bench.run.remote_replicas import Replicas
from bench.run.tracing import BenchTracing
from graphs.hooks import Prepared
from graphs.method_spec import RemoteCall
from graphs.registry import METHODS, method_context, resolve
from state.context import Context
from world.progress import OpenPhases
from world.results_log import ResultsLog


def wire_config(config: dict[str, Any] | Any) -> dict[str, Any]:
    """A `run_config` as JSON for the run's `config`: name, tags and metadata (the run id is the
    server's; `BenchTracing` learns it when the run is created)."""
    return {key: value for key, value in dict(config).items() if key != "run_id"}


@dataclass
class RemotePool:
    """Prepares and ranks methods on a deployment (see the module docstring)."""

    replicas: Replicas
    """The deployment's URLs and their state."""
    tracing: BenchTracing | None = None
    """Each user's run name, tags and metadata, and its feedback once scored."""
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per method: runs per server and retries while preparing and ranking it."""

    def prepare(
        self,
        method: str,
        cases: Sequence[EvalCase],
        protocol: Protocol,
        log: ResultsLog,
        concurrency: int,
        context: Context,
        on_phase: PhaseProgress | None = None,
    ) -> Prepared:
        """The method's context, after its `remote_prepare` hook ran on the deployment (if any)."""
        ctx = method_context(method, context)
        reference = METHODS[method].remote_prepare
        if not reference:
            return Prepared(ctx)
        request = prepare_request(method, cases, protocol, log, concurrency, ctx, on_phase)
        before = self.replicas.summary()
        try:
            prepared = resolve(reference)(request, self.replicas)
        except Exception as error:
            if is_crash(error):
                raise MethodCrashed.of(method, None, error, "preparing") from error
            raise
        finally:
            self._note(method, before, "prepare")
        return prepared

    def rank(
        self,
        method: str,
        cases: Sequence[EvalCase],
        protocol: Protocol,
        log: ResultsLog,
        concurrency: int,
        context: Context,
        on_progress: ProgressHook | None = None,
        phases: OpenPhases | None = None,
        checkpoints: object = None,
    ) -> None:
        """Rank every case of `method` not yet in `log` on the deployment, appending each record as
        its answer arrives (the same records as in-process: `result_record`)."""
        finished = log.done(method)
        pending = {case.user_id: case for case in cases if case.user_id not in finished}
        tracing = self.tracing or BenchTracing(protocol)
        calls = [
            RemoteCall(
                method,
                case.request(protocol.scenario),
                context,
                wire_config(tracing.config(method, case)),
                case.user_id,
            )
            for case in pending.values()
        ]
        count = 0

        def scored(call: RemoteCall, output: dict[str, Any], seconds: float) -> None:
            nonlocal count
            record = result_record(method, pending[call.user or ""], output, seconds, context)
            log.append(record)
            tracing.scored(record)
            count += 1
            if on_progress:
                on_progress(method, count)

        def created(call: RemoteCall, run_id: str) -> None:  # the server's run id is the trace's root
            tracing.run_ids[(call.assistant, call.user or "")] = UUID(run_id)

        before = self.replicas.summary()
        self.replicas.on_run_created = created
        try:
            self.replicas.run_timed(calls, scored, concurrency)
        finally:
            self.replicas.on_run_created = None
            self._note(method, before, "rank")

    def _note(self, method: str, before: dict[str, Any], stage: str) -> None:
        after = self.replicas.summary()
        entry = self.stats.setdefault(method, {"runs": {}, "retried": 0, "lost": {}})
        for url, runs in after["servers"].items():
            entry["runs"][url] = entry["runs"].get(url, 0) + runs - before["servers"].get(url, 0)
        entry["retried"] += sum(after["retried"].values()) - sum(before["retried"].values())
        entry["lost"].update({url: why for url, why in after["lost"].items() if url not in before["lost"]})


def describe_servers(pool: RemotePool, seconds: float) -> str:
    """One line: runs per server, runs retried on another replica, servers lost, wall time."""
    summary = pool.replicas.summary()
    runs = ", ".join(f"{url} {count}" for url, count in summary["servers"].items())
    retried = sum(summary["retried"].values())
    line = f"LangGraph servers: runs answered {runs}; {retried} run(s) retried on another replica"
    if summary["lost"]:
        line += "; lost " + "; ".join(f"{url} ({why})" for url, why in summary["lost"].items())
    return f"{line}; {time.strftime('%M:%S', time.gmtime(seconds))} wall"


def recommend_remotely(
    servers: str,
    method: str,
    request: dict[str, Any],
    context: Context,
    config: dict[str, Any],
    key: str | None = None,
) -> dict[str, Any]:
    """`recgraph recommend --server URL [--server-key KEY]`: one user's run on the deployment; its
    output."""
    check_remote_methods([method])
    replicas = connect(servers, [method], key)
    found: list[dict[str, Any]] = []
    call = RemoteCall(
        method, request, method_context(method, context), wire_config(config), str(request["user_id"])
    )
    replicas.run_all([call], lambda _, output: found.append(output), 1)
    return found[0]
