"""`recgraph recommend`: one user's ranked list with titles (and rationales if any)."""

from __future__ import annotations

import argparse

from rich.markup import escape
from rich.table import Table

from recgraph.terminal import console


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
