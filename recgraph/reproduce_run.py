"""`recgraph reproduce PAPER`: the cost plan, then one `recgraph bench` run per scenario of the paper
(the same command function, so resuming, progress, traces and reports are the bench's), then the
paper's tables with our numbers and the planned beside the measured tokens."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.reproduce.papers import Paper, check_paper, load_paper
from bench.reproduce.plan import ScenarioRun, filter_note, missing_methods, scenario_runs

Print = Callable[[str], None]


def bench_args(args: argparse.Namespace, paper: Paper, run: ScenarioRun, out: Path) -> argparse.Namespace:
    """The `recgraph bench` options of one scenario run, parsed by the bench parser itself."""
    from recgraph.cli import build_parser

    protocol = paper.protocol
    argv = [
        "bench", "--dataset", args.dataset, "--methods", ",".join(run.methods), "--scenario", run.scenario,
        "--users", str(args.users or protocol["users"]),
        "--candidates", str(args.candidates or protocol["candidates"]),
        "--seed", str(args.seed), "--llm", args.llm, "--out", str(out / run.scenario),
        "--concurrency", str(args.concurrency), "--llm-retries", str(args.llm_retries),
    ]  # fmt: skip
    k = protocol.get("min_interactions") if args.min_user_interactions is None else args.min_user_interactions
    if (
        k and run.scenario != "cold_start"
    ):  # the paper's user filter (cold-start users have 2-3 by definition)
        argv += ["--min-user-interactions", str(k)]
    if protocol["candidate_source"] != "auto":  # ARAG: negatives from the retrieval (retrieval_negatives)
        argv += ["--candidate-source", protocol["candidate_source"]]
    if args.base_url:
        argv += ["--base-url", args.base_url]
    cache = args.llm_cache or (str(out / "llm_cache.sqlite") if args.llm.startswith("openai:") else "")
    if cache:  # a hosted model: a rerun or a resumed run replays what it already paid for
        argv += ["--llm-cache", cache]
    return build_parser().parse_args(argv)


def plan_rows(
    args: argparse.Namespace, paper: Paper, runs: list[ScenarioRun], out: Path, say: Print
) -> list[Any]:
    """Every scenario run's planned calls and tokens (probed under the loopback simulator)."""
    from bench.cost.probe import probe
    from bench.planned_calls import planned_calls
    from bench.protocol import plan_cases
    from recgraph.commands import protocol_from_args
    from recgraph.llm_session import context_from_args
    from world.environment import get_environment
    from world.errors import ProtocolError
    from world.results_log import ResultsLog

    rows = []
    for run in runs:
        if not run.methods:
            continue
        bench = bench_args(args, paper, run, out)
        protocol = protocol_from_args(bench, bench.llm)
        try:
            cases = plan_cases(get_environment(bench.dataset), protocol)
        except ProtocolError as error:
            say(f"scenario {run.scenario}: {error}")
            continue
        log_path = Path(bench.out) / "results.jsonl"
        done = ResultsLog(log_path, protocol.as_dict()).done if log_path.exists() else (lambda m: {})
        pending = {m: sum(1 for c in cases if c.user_id not in done(m)) for m in run.methods}
        context = context_from_args(bench)
        probed = probe(run.methods, cases, protocol, context) if bench.llm != "heuristic" else {}
        for row in planned_calls(run.methods, pending, context, protocol.candidates, probed):
            rows.append((run.scenario, row))
    return rows


def reproduce(args: argparse.Namespace, say: Print) -> int:
    """Print the plan; unless `--dry-run`, run each scenario through `recgraph bench` and write
    OUT/reproduce.md and OUT/reproduce.json."""
    from agents.backends import describe_backend
    from bench.planned_calls import describe_plan
    from world.datasets import check_dataset_spec, load_dataset

    paper = load_paper(check_paper(args.paper))
    check_dataset_spec(args.dataset)
    load_dataset(args.dataset)  # bad data fails here in one line, before any header (and is cached)
    out = Path(args.out or f"runs/reproduce/{paper.name}")
    runs = scenario_runs(paper)
    header = [f"paper: {paper.title}; protocol: {paper.protocol['note']}"]
    header += [f"the paper's model: {paper.protocol['llm']}; ours: {describe_backend(args.llm)}"]
    if missing := missing_methods(paper):
        header.append(f"rows without a recgraph method: {', '.join(missing)} (shown as not in recgraph)")
    if note := filter_note(paper, args.min_user_interactions):
        header.append(note)
    for line in header:
        say(line)
    rows = plan_rows(args, paper, runs, out, say) if args.llm != "heuristic" else []
    if rows:
        say(describe_plan([row for _, row in rows], args.llm_retries, args.llm))
    if args.dry_run:
        say("dry run: nothing was sent and nothing written")
        return 0
    return _run(args, paper, runs, out, header, rows, say)


def _run(
    args: argparse.Namespace, paper: Paper, runs: list[ScenarioRun], out: Path, header: list[str],
    rows: list[Any], say: Print,
) -> int:  # fmt: skip
    from bench.reproduce.costs import cost_markdown, cost_rows
    from bench.reproduce.table import paper_report
    from recgraph.commands import bench
    from world.errors import ProtocolError

    metrics: dict[str, dict[str, Any]] = {}
    worst = 0
    for run in runs:
        if not run.methods:
            continue
        say(f"{paper.name}: scenario {run.scenario}, methods {', '.join(run.methods)}")
        options = bench_args(args, paper, run, out)
        if rows:  # the scenario's report shows this plan beside what it measured; bench probes no more
            options.planned = [row for scenario, row in rows if scenario == run.scenario]
        try:
            code = bench(options)
        except ProtocolError as error:  # e.g. no user of this dataset qualifies for the scenario
            header.append(f"scenario {run.scenario} not run: {error}")
            say(header[-1])
            continue
        path = out / run.scenario / "metrics.json"
        if path.exists():
            metrics[run.scenario] = json.loads(path.read_text())
        if code not in (0, 3):  # a crash or interruption: the same command resumes
            return code
        worst = max(worst, code)
    from world.environment import get_environment

    dataset = get_environment(args.dataset).dataset.name
    text, document = paper_report(paper, metrics, dataset, header, args.llm)
    costs = cost_rows(rows, metrics, args.llm)
    document["cost"] = costs
    text += cost_markdown(costs)
    out.mkdir(parents=True, exist_ok=True)
    (out / "reproduce.md").write_text(text)
    (out / "reproduce.json").write_text(json.dumps(document, indent=1) + "\n")
    if costs:  # planned beside measured, on the console too
        say(cost_markdown(costs).strip())
    say(f"wrote {out}/reproduce.md, reproduce.json")
    return worst
