"""`recgraph bench`: run methods on one protocol and write the reports (or `bench perf`)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from recgraph.perf_command import perf
from recgraph.protocol_args import protocol_from_args
from recgraph.server_runs import remote_pool, remote_replicas, report_servers
from recgraph.terminal import console, progress_bar, progress_log, warn

if TYPE_CHECKING:
    from bench.run.crash import RunStopped


def bench_or_perf(args: argparse.Namespace) -> int:
    """`recgraph bench` or `recgraph bench perf`."""
    if args.mode == "perf":
        if getattr(args, "set", None):
            from world.errors import ProtocolError

            raise ProtocolError("--set applies to `recgraph bench` runs, not to `bench perf`")
        return perf(args)
    return bench(args)


def bench(args: argparse.Namespace) -> int:
    """`recgraph bench`: run methods on one protocol and write the four report files."""
    from graphs.registry import method_context, parse_methods

    methods = parse_methods(args.methods)  # first: a misspelt name is refused before heavy imports
    from bench.protocol.knob_settings import knob_settings

    knobs = knob_settings(getattr(args, "set", None) or [], methods)  # --set, checked against the classes
    from world.datasets import check_dataset_spec

    check_dataset_spec(args.dataset)
    replicas = remote_replicas(args, methods)  # --server: every URL answers, before any heavy work
    from agents.backends import describe_backend
    from bench.cost.planned_calls import describe_plan, planned_calls, plans_tokens
    from bench.protocol.eligibility import candidates_block, describe_candidates, describe_cases
    from bench.protocol.plan import plan_cases
    from bench.protocol.spec import check_protocol
    from bench.report import console as report_console
    from bench.report import outputs as report
    from bench.report.router_headroom import router_headroom
    from bench.run.crash import RunStopped, record_stop
    from bench.run.runner import run_benchmark
    from bench.run.tracing import bench_tracing
    from bench.stats.compare import add_statistics, check_reference, per_user_rows
    from bench.stats.fallbacks import EXIT_TOO_MANY_FALLBACKS
    from recgraph.bench_progress import bench_progress
    from recgraph.fallback_options import fallback_check
    from recgraph.llm_session import context_from_args, llm_session
    from recgraph.run_header import dataset_notes, print_header
    from world.environment import get_environment
    from world.errors import ProtocolError
    from world.results_log import ResultsLog

    check_reference(args.reference, methods)
    from world.loaders.agentrecbench import scenario_spec

    # AgentRecBench's release layout: the scenario's own task folder and environment data
    args.dataset = scenario_spec(args.dataset, args.scenario)
    protocol = protocol_from_args(args, args.llm, knobs)
    check_protocol(protocol)
    if args.concurrency < 1:
        raise ProtocolError(f"--concurrency must be at least 1, got {args.concurrency}")
    from bench.run.workers import check_workers  # --workers N (bench/run/workers.py)

    check_workers(args.workers, args.concurrency, getattr(args, "trace", False))
    from bench.run.preload import start_preloads  # methods' one-time loading overlaps the dataset's

    if replicas is None:  # the servers load their own models
        start_preloads(methods, context_from_args(args))
    env = get_environment(args.dataset)
    cases = plan_cases(env, protocol)
    out = Path(args.out or "runs/bench")
    out.mkdir(parents=True, exist_ok=True)
    log = ResultsLog(out / "results.jsonl", protocol.as_dict())
    print_header(
        console,
        f"[bold]{escape(env.dataset.name)}[/]: {len(cases)} users, N={protocol.candidates}, "
        f"scenario {protocol.scenario}, backend: {escape(describe_backend(protocol.llm))}",
    )
    candidates = candidates_block(env, protocol, cases)
    # how candidates were made, who is eligible
    print_header(console, escape(describe_cases(candidates)))
    print_header(console, escape(describe_candidates(candidates)))
    if knobs.given:  # which methods each --set reached
        print_header(console, escape(knobs.describe()))
    contexts = {m: knobs.apply(m, method_context(m, context_from_args(args))) for m in methods}
    for line in dataset_notes(env, contexts):  # e.g. MemRec rules reading a field the data lacks
        print_header(console, escape(line))
    planned = getattr(args, "planned", None)  # `recgraph reproduce` probed this run's plan already
    if planned is None and plans_tokens(args.llm):  # said before a paid backend starts: it can be stopped
        pending = {m: sum(1 for c in cases if c.user_id not in log.done(m)) for m in methods}
        from bench.run.cost_probe import probe  # tokens: the prompts of a few users under the loopback sim

        probed = probe(methods, cases, protocol, context_from_args(args))
        planned = planned_calls(methods, pending, context_from_args(args), protocol.candidates, probed)
    if planned:
        print_header(console, escape(describe_plan(planned, args.llm_retries, args.llm)))
    trace, project = getattr(args, "trace", False), getattr(args, "langsmith_project", None)
    resumed = {m: len(log.done(m)) for m in methods}
    with (
        bench_tracing(protocol, trace, project, warn) as tracing,
        llm_session(args) as (context, server),
        bench_progress(progress_bar(), len(cases), resumed, progress_log()) as progress,
    ):
        knobs.preflight(context)  # a role model given with --set, checked as --llm is
        stopped: RunStopped | None = None
        remote = remote_pool(replicas, tracing)
        plotting = report.preload_plotting()  # joined below, before the report is drawn
        started = time.perf_counter()
        try:
            results = run_benchmark(
                methods, cases, protocol, log, args.concurrency, context, progress.advance, progress.phase,
                tracing, args.workers, on_phase_end=progress.end, checkpoints=args.checkpoints, remote=remote,
                knobs=knobs,
            )  # fmt: skip
        except RunStopped as stop:  # a method failed: report the ones that finished (bench/run/crash.py)
            results, stopped = stop.results, stop
        server_stats = server.stats() if server else None
    if remote is not None:  # runs per server and retries, per method (metrics.json) and in one line
        console.print(escape(report_servers(remote, results, time.perf_counter() - started)))
    failed = None
    if stopped is not None:
        done = [u for u in log.done(stopped.method) if u in {c.user_id for c in cases}]
        failed = record_stop(stopped, methods, done, len(cases), out)
    if not results and stopped is not None:
        return stopped_exit(stopped, out)
    name = env.dataset.name
    settings = protocol.as_dict()
    reference = args.reference if args.reference in results else None  # a failed reference: default
    comparisons = add_statistics(results, log, cases, reference)  # CIs beside values; vs reference
    check = fallback_check(args, results)
    headroom = router_headroom(per_user_rows(results, log, cases))
    extras = {"failed": failed, "candidates": candidates, "router_headroom": headroom, "planned": planned}
    report.write_metrics(out, name, settings, results, server_stats, comparisons, check, **extras)
    report.write_report_md(out, name, settings, results, comparisons, check, **extras)
    plotting.join()
    report.write_report_png(out, name, settings, results, comparisons)
    console.print(report_console.rich_report(name, settings, results, comparisons, check))
    if server_stats is not None:
        console.print(report.fault_table(server_stats, results))
    console.print(f"wrote {out}/metrics.json, results.jsonl, report.md, report.png")
    if stopped is not None:
        return stopped_exit(stopped, out)
    if check.fails:
        print(f"recgraph: error: {check.failure()}", file=sys.stderr)
        return EXIT_TOO_MANY_FALLBACKS
    return 0


def stopped_exit(stopped: RunStopped, out: Path) -> int:
    """The one line of a stopped run: a crash's (exit `EXIT_METHOD_CRASHED`), or the user-input
    error that stopped it re-raised (the CLI prints it, exit 2)."""
    from bench.run.crash import EXIT_METHOD_CRASHED, MethodCrashed

    if not isinstance(stopped.error, MethodCrashed):
        raise stopped.error
    where = f"traceback in {out / 'errors.log'}; the same command resumes"
    print(f"recgraph: error: {stopped.error} ({where})", file=sys.stderr)
    return EXIT_METHOD_CRASHED
