"""`recgraph reproduce PAPER --dataset NAME=PATH ...`: the cost plan, then per paper dataset one
`recgraph bench` run per scenario its columns use (the same command function, so resuming, progress,
traces and reports are the bench's), then the paper's tables, each column filled from its own
dataset's run, with the planned beside the measured tokens."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.reproduce.papers import Paper, check_paper, load_paper
from bench.reproduce.plan import (
    ScenarioRun,
    dataset_arguments,
    dataset_runs,
    filter_note,
    knob_assignments,
    missing_methods,
    run_knobs,
)

Print = Callable[[str], None]
SOURCES = "datasets.json"
"""OUT's record of which data filled each paper dataset (NAME -> path and loaded name)."""


def bench_args(
    args: argparse.Namespace, paper: Paper, run: ScenarioRun, path: str, knobs: Sequence[str], out: Path
) -> argparse.Namespace:
    """The `recgraph bench` options of one run (`path`: its dataset), parsed by the bench parser."""
    from recgraph.bench_parser import bench_parser

    protocol = paper.protocol
    argv = [
        "bench", "--dataset", path, "--methods", ",".join(run.methods), "--scenario", run.scenario,
        "--users", str(run_users(args.users, run.users(paper), bool(run.sample))),
        "--candidates", str(args.candidates or protocol["candidates"]),
        "--seed", str(args.seed), "--llm", args.llm, "--out", str(out / run.folder),
        "--concurrency", str(args.concurrency), "--llm-retries", str(args.llm_retries),
    ]  # fmt: skip
    k = protocol.get("min_interactions") if args.min_user_interactions is None else args.min_user_interactions
    if k and run.scenario != "cold_start":  # the paper's user filter (cold-start users have 2-3)
        argv += ["--min-user-interactions", str(k)]
    if protocol["candidate_source"] != "auto":  # ARAG: negatives from the retrieval (retrieval_negatives)
        argv += ["--candidate-source", protocol["candidate_source"]]
    for knob in knobs:
        argv += ["--set", knob]
    if args.base_url:
        argv += ["--base-url", args.base_url]
    cache = args.llm_cache or (str(out / "llm_cache.sqlite") if args.llm.startswith("openai:") else "")
    if cache:  # a hosted model: a rerun or a resumed run replays what it already paid for
        argv += ["--llm-cache", cache]
    return bench_parser().parse_args(argv)


def run_users(given: str | None, paper: int | str, sample: bool) -> int | str:
    """A run's users: the paper's, unless `--users` is given; a named sample keeps its size under
    `--users all` (the sample is the paper's choice) and is capped by a smaller count."""
    if given is None:
        return paper
    if sample:
        return paper if given == "all" else min(int(given), int(paper))
    return given


class Reproduction:
    """One reproduce command: the paper, the datasets given (NAME -> PATH), their runs and knobs."""

    def __init__(self, args: argparse.Namespace) -> None:
        """Check the paper, the `--dataset NAME=PATH` values and the `--set` knobs (one-line errors)."""
        from bench.protocol.knob_settings import KnobError, split_assignment, unknown_knob
        from world.datasets import check_dataset_spec

        self.args, self.paper = args, load_paper(check_paper(args.paper))
        self.paths: dict[str, str] = dataset_arguments(self.paper, args.dataset)
        for path in self.paths.values():
            check_dataset_spec(path)
        self.out = Path(args.out or f"runs/reproduce/{self.paper.name}")
        self.runs = [r for name in self.paths for r in dataset_runs(self.paper, self.paper.dataset(name))]
        self.knobs = knob_assignments(self.paper, args.set)
        methods = list(dict.fromkeys(m for run in self.runs for m in run.methods))
        reached = {split_assignment(k)[0] for run in self.runs for k in run_knobs(self.knobs, run)}
        for text in args.set:  # the user's own --set must reach some run (the paper's may not)
            if split_assignment(text)[0] not in reached:
                raise KnobError(unknown_knob(split_assignment(text)[0], methods))

    def options(self, run: ScenarioRun) -> argparse.Namespace:
        """The bench options of `run`."""
        path = self.paths[run.dataset]
        return bench_args(self.args, self.paper, run, path, run_knobs(self.knobs, run), self.out)


def recorded_sources(out: Path, paper: str) -> dict[str, dict[str, str]]:
    """OUT's datasets.json for `paper` (empty when OUT holds none yet); an OUT another paper's
    reproduction wrote is refused (its runs and names are that paper's)."""
    from world.errors import ProtocolError

    path = out / SOURCES
    if not path.exists():
        return {}
    recorded = json.loads(path.read_text())
    if recorded.get("paper") != paper:
        raise ProtocolError(
            f"{out} holds a reproduction of {recorded.get('paper')!r}, not {paper}: give another --out"
        )
    return dict(recorded["datasets"])


def resolved(path: str) -> str:
    """A --dataset path as datasets.json keeps it: absolute when it exists (a built-in name as given)."""
    found = Path(path).expanduser()
    return str(found.resolve()) if found.exists() else path


def check_sources(out: Path, paper: str, paths: Mapping[str, str]) -> None:
    """Refuse a paper dataset OUT already holds from other data (its runs would mix two datasets)."""
    from world.errors import ProtocolError

    for name, old in recorded_sources(out, paper).items():
        if name in paths and resolved(paths[name]) != old["path"]:
            raise ProtocolError(
                f"{out} holds {name} from {old['path']}, not {paths[name]}: give another --out, or "
                f"--dataset {name}={old['path']} to resume it"
            )


def plan_rows(rep: Reproduction, say: Print) -> list[Any]:
    """Every run's planned calls and tokens (probed under the loopback simulator), as (run folder, row)."""
    from bench.cost.planned_calls import planned_calls
    from bench.protocol.knob_settings import knob_settings
    from bench.protocol.plan import plan_cases
    from bench.run.cost_probe import probe
    from recgraph.llm_session import context_from_args
    from recgraph.protocol_args import protocol_from_args
    from world.environment import get_environment
    from world.errors import ProtocolError
    from world.results_log import ResultsLog

    rows = []
    for run in rep.runs:
        if not run.methods:
            continue
        bench = rep.options(run)  # the run's --set: the probe and the plan train as the run will
        protocol = protocol_from_args(bench, bench.llm, knob_settings(bench.set or [], run.methods))
        try:
            cases = plan_cases(get_environment(bench.dataset), protocol)
        except ProtocolError as error:
            say(f"{run.folder}: {error}")
            continue
        log_path = Path(bench.out) / "results.jsonl"
        done = ResultsLog(log_path, protocol.as_dict()).done if log_path.exists() else (lambda m: {})
        pending = {m: sum(1 for c in cases if c.user_id not in done(m)) for m in run.methods}
        context = context_from_args(bench)
        probed = probe(run.methods, cases, protocol, context) if bench.llm != "heuristic" else {}
        for row in planned_calls(run.methods, pending, context, protocol.candidates, probed):
            rows.append((run.folder, row))
    return rows


def reproduce(args: argparse.Namespace, say: Print) -> int:
    """Print the plan; unless `--dry-run`, run each dataset's scenarios through `recgraph bench` and
    write OUT/reproduce.md and OUT/reproduce.json from every dataset OUT holds."""
    from agents.backends import describe_backend
    from bench.cost.planned_calls import describe_plan
    from world.datasets import load_dataset

    rep = Reproduction(args)
    check_sources(rep.out, rep.paper.name, rep.paths)
    for path in rep.paths.values():
        load_dataset(path)  # bad data fails here in one line, before any header (and is cached)
    paper = rep.paper
    header = [f"paper: {paper.title}; protocol: {paper.protocol['note']}"]
    header += [f"the paper's model: {paper.protocol['llm']}; ours: {describe_backend(args.llm)}"]
    header += [f"--dataset {name}={path}" for name, path in rep.paths.items()]
    if rep.knobs:
        header.append(f"knobs (the paper's protocol, then --set): {', '.join(rep.knobs)}")
    if missing := missing_methods(paper):
        header.append(f"rows without a recgraph method: {', '.join(missing)} (shown as not in recgraph)")
    if note := filter_note(paper, args.min_user_interactions):
        header.append(note)
    for line in header:
        say(line)
    rows = plan_rows(rep, say) if args.llm != "heuristic" else []
    if rows:  # each method's line names its run (NAME/scenario): one command plans several datasets
        named = [replace(row, method=f"{folder} · {row.method}") for folder, row in rows]
        say(describe_plan(named, args.llm_retries, args.llm))
    if args.dry_run:
        say("dry run: nothing was sent and nothing written")
        return 0
    return _run(rep, header, rows, say)


def _run(rep: Reproduction, header: list[str], rows: list[Any], say: Print) -> int:
    from bench.reproduce.costs import cost_markdown, cost_rows
    from bench.reproduce.table import paper_report
    from recgraph.bench_command import bench
    from world.environment import get_environment
    from world.errors import ProtocolError

    sources = recorded_sources(rep.out, rep.paper.name)
    for name, path in rep.paths.items():
        sources[name] = {"path": resolved(path), "dataset": get_environment(path).dataset.name}
    rep.out.mkdir(parents=True, exist_ok=True)
    recorded = {"paper": rep.paper.name, "datasets": sources}
    (rep.out / SOURCES).write_text(json.dumps(recorded, indent=1) + "\n")
    worst = 0
    for run in rep.runs:
        if not run.methods:
            continue
        sample = f", the {run.sample} sample" if run.sample else ""
        methods = ", ".join(run.methods)
        say(f"{rep.paper.name}: {run.dataset}, scenario {run.scenario}{sample}, methods {methods}")
        options = rep.options(run)
        if rows:  # the run's report shows this plan beside what it measured; bench probes no more
            options.planned = [row for folder, row in rows if folder == run.folder]
        try:
            code = bench(options)
        except ProtocolError as error:  # e.g. no user of this dataset qualifies for the scenario
            header.append(f"{run.dataset}, scenario {run.scenario}{sample} not run: {error}")
            say(header[-1])
            continue
        if code not in (0, 3):  # a crash or interruption: the same command resumes
            return code
        worst = max(worst, code)
    held = held_runs(rep.paper, rep.out, sources)  # this command's runs and earlier ones', read once
    text, document = paper_report(rep.paper, held, sources, header, rep.args.llm)
    costs = cost_rows(rows, held, rep.args.llm)  # only this command's planned runs have rows
    document["cost"] = costs
    text += cost_markdown(costs)
    (rep.out / "reproduce.md").write_text(text)
    (rep.out / "reproduce.json").write_text(json.dumps(document, indent=1) + "\n")
    if costs:  # planned beside measured, on the console too
        say(cost_markdown(costs).strip())
    say(f"wrote {rep.out}/reproduce.md, reproduce.json")
    return worst


def held_runs(paper: Paper, out: Path, sources: Mapping[str, Any]) -> dict[str, dict]:
    """Every finished run OUT holds for the paper's datasets (this command's and earlier ones'),
    as run folder -> its metrics.json."""
    held = {}
    for name in sources:
        for run in dataset_runs(paper, paper.dataset(name)):
            path = out / run.folder / "metrics.json"
            if path.exists():
                held[run.folder] = json.loads(path.read_text())
    return held
