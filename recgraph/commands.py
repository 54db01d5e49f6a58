"""What each `recgraph` subcommand does (argument parsing lives in cli.py)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from recgraph.server_runs import remote_pool, remote_replicas, report_servers

if TYPE_CHECKING:
    from bench.protocol.knob_settings import KnobSettings
    from bench.protocol.spec import Protocol
    from bench.run.crash import RunStopped
    from recgraph.progress_log import ProgressLog

# Piped output gets a wide console so the comparison table is not squeezed to 80 columns.
console = Console(width=None if sys.stdout.isatty() else 160)


def bench_or_perf(args: argparse.Namespace) -> int:
    """`recgraph bench` or `recgraph bench perf`."""
    if args.mode == "perf":
        if getattr(args, "set", None):
            from world.errors import ProtocolError

            raise ProtocolError("--set applies to `recgraph bench` runs, not to `bench perf`")
        from recgraph.perf_command import perf

        return perf(args)
    return bench(args)


def protocol_from_args(args: argparse.Namespace, llm: str, knobs: KnobSettings | None = None) -> Protocol:
    """The `Protocol` named by the bench options (dataset, candidates, seed, scenario, users, and
    the `--set` knobs)."""
    from bench.protocol.spec import Protocol, user_count

    return Protocol(
        dataset=args.dataset,
        candidates=args.candidates,
        seed=args.seed,
        scenario=args.scenario,
        users=user_count(str(args.users)),
        llm=llm,
        mix_candidates=getattr(args, "mix_candidates", False),
        candidate_source=getattr(args, "candidate_source", "auto"),
        retrieval_pool=getattr(args, "retrieval_pool", 0),
        knobs=tuple(knobs.given.items()) if knobs is not None else (),
    )


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


def warn(line: str) -> None:
    """One warning line on stderr (the run goes on)."""
    print(f"recgraph: warning: {line}", file=sys.stderr)


def progress_log() -> ProgressLog | None:
    """Plain progress lines on stdout when it is not a terminal (`nohup`, CI, a log file), else None
    (the live bar shows progress)."""
    from recgraph.progress_log import ProgressLog

    if console.is_terminal:
        return None
    return ProgressLog(lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True))


def progress_bar() -> Progress:
    """A rich progress bar with ETA, one row per method."""
    return Progress(
        TextColumn("{task.description:>14}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )


def recommend(args: argparse.Namespace) -> int:
    """`recgraph recommend`: one user's ranked list with titles (and rationales if any)."""
    from graphs.registry import get_graph, parse_methods
    from world.datasets import check_dataset_spec

    method = parse_methods(args.method)[0]  # bad names are refused before the heavy imports below
    check_dataset_spec(args.dataset)
    from world.loaders.agentrecbench import scenario_spec

    args.dataset = scenario_spec(args.dataset, args.scenario)  # AgentRecBench: the scenario's own view
    from agents.backends import describe_backend
    from bench.protocol.plan import plan_cases_for
    from bench.protocol.spec import Protocol
    from bench.run.crash import MethodCrashed, is_crash
    from graphs.tracing import run_config
    from recgraph.llm_session import llm_session
    from recgraph.recommend_notes import fallback_notice
    from world.environment import get_environment

    env = get_environment(args.dataset)
    env.require_user(args.user)
    request: dict[str, object] = {"user_id": args.user, "scenario": args.scenario}
    target = None
    if args.candidates is not None:
        protocol = Protocol(
            dataset=args.dataset,
            candidates=args.candidates,
            seed=args.seed,
            scenario=args.scenario,
            users=1,
            llm=args.llm,
        )
        case = plan_cases_for(env, protocol, [args.user])[0]
        request["candidates"], target = case.candidates, case.target
    with llm_session(args) as (context, _):
        context.top_k = args.top_k
        tracing_config = run_config(
            method,
            args.user,
            dataset=args.dataset,
            backend=args.llm,
            scenario=args.scenario,
            seed=args.seed,
            candidates=args.candidates,
        )
        try:
            if args.server:  # the deployment runs the graph (bench/run/remote.py)
                from bench.run.remote import recommend_remotely
                from recgraph.server_runs import server_key

                config = dict(tracing_config)
                output = recommend_remotely(args.server, method, request, context, config, server_key(args))
            else:
                output = get_graph(method).invoke(request, config=tracing_config, context=context)
        except Exception as error:  # a bug in the method: one line here, the traceback in errors.log
            if not is_crash(error):
                raise
            raise MethodCrashed.of(method, args.user, error) from error
    scores, rationales = output.get("scores") or {}, output.get("rationales") or {}
    columns = ["rank", "item", "title", *(["score"] if scores else []), *(["why"] if rationales else [])]
    trace = output.get("trace") or []
    table = Table(
        title=f"{method} for user {args.user} · {describe_backend(args.llm)}",
        caption=escape(f"{trace[-1]['role']}: {trace[-1]['content']}") if trace else None,
        min_width=100,
    )
    for column in columns:
        table.add_column(column)
    trajectory = (output.get("details") or {}).get("trajectory")
    if trajectory:
        console.print(trajectory_table(trajectory))
    for rank, item in enumerate(output["ranking"], start=1):
        marker = " ← held-out target" if item == target else ""
        row = [str(rank), item, env.dataset.items[item].title + marker]
        if scores:
            row.append(f"{scores[item]:.4f}" if item in scores else "")
        if rationales:
            row.append(rationales.get(item, ""))
        table.add_row(*row)
    console.print(table)
    notice = fallback_notice(output.get("usage") or [])
    if notice:  # said plainly: this answer (or part of it) is not the LLM's
        console.print(f"[bold yellow]{escape(notice)}[/]")
    if output.get("degraded"):  # features this dataset cannot feed (state/degraded.py)
        console.print(escape("switched off for this dataset: " + "; ".join(output["degraded"])))
    return 0


def trajectory_table(steps: list[dict]) -> Table:
    """The tools a method called before ranking (step, tool, confidence, summary)."""
    table = Table(title="trajectory", min_width=100)
    for column in ("step", "tool", "confidence", "summary"):
        table.add_column(column)
    for step in steps:
        confidence = step.get("confidence")
        shown = f"{float(confidence):.2f}" if confidence is not None else ""
        summary = escape(str(step.get("summary", "")))
        table.add_row(str(step.get("step", "")), str(step.get("tool", "")), shown, summary)
    return table
