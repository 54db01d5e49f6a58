"""`recgraph chainrec mine-tools`: ChainRec's offline tool construction (paper Sec. 4.1, appendix B).

With an LLM it first generates step-labelled CoT traces on training tasks (each user's validation
interaction, never the test target), durably and resumably into `OUT/traces.jsonl`; with `--traces
FILE` it reads a traces file instead (the only way on the heuristic backend, which writes no chains of
thought). Then: keep the correct and concise traces, normalise step labels, embed them with MiniLM,
k-means with k chosen by silhouette, write cluster cards mapped to the base library's tools as
`OUT/clusters.json` and `OUT/clusters.md`, and the tool library the mapping builds as
`OUT/library.json` (or `--library-out`): the file `--set chainrec_library=PATH` loads.
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from agents.chainrec.mining.library import LIBRARY_NAME, MAP_MARGIN
from recgraph.options import add_dataset_options
from recgraph.terminal import console, progress_bar
from state.chainrec.context import ChainRecContext

DEFAULT_USERS = 50
LABEL_SHOWN = 50
"""Characters of a representative label printed per card (clusters.md has them whole)."""
NO_TRACES = (
    "mine-tools needs a traces file (--traces FILE, JSONL) or an LLM to write traces (--llm sim, local "
    "or openai:<model>): the heuristic backend writes no chains of thought"
)


def add_actions(actions: argparse._SubParsersAction) -> None:
    """Add `mine-tools` to `recgraph chainrec`."""
    parser = actions.add_parser(
        "mine-tools", help="mine CoT traces into cluster cards mapped to the Tool Agent Library"
    )
    add_dataset_options(parser)
    parser.add_argument("--traces", default="", help="a traces JSONL file to mine (no generation)")
    parser.add_argument(
        "--users", type=int, default=DEFAULT_USERS, help="training tasks to trace (with an LLM)"
    )
    parser.add_argument(
        "--candidates", type=int, default=20, help="N per task: validation target + N-1 negatives"
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        default=ChainRecContext.chainrec_max_steps + 1,
        help="step budget of a kept trace (T_max tools + the final ranking step)",
    )
    parser.add_argument("--k-min", type=int, default=2, help="smallest k tried")
    parser.add_argument("--k-max", type=int, default=12, help="largest k tried")
    parser.add_argument("--concurrency", type=int, default=4, help="LLM calls in flight (generation)")
    parser.add_argument(
        "--base",
        default="",
        help="the library whose tool cards clusters map to (default: the shipped library)",
    )
    parser.add_argument(
        "--map-margin",
        type=float,
        default=MAP_MARGIN,
        help="a cluster also maps to every tool whose cosine is at least (1 - this) times its nearest tool's",
    )
    parser.add_argument(
        "--out",
        default="",
        help="output folder (default: the dataset's cache, or $RECGRAPH_HOME/chainrec_mining with --traces)",
    )
    parser.add_argument(
        "--library-out", default="", help="the tool library file to write (default: OUT/library.json)"
    )
    parser.set_defaults(handler=mine_tools)


def _generate(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """Trace the training tasks (resumable); the log's path and what happened."""
    from agents.backends import describe_backend
    from agents.chainrec.mining.tasks import trace_task, trainable_users
    from agents.chainrec.mining.traces import generate_traces, open_log
    from bench.protocol.candidates import sample_candidates
    from recgraph.llm_session import llm_session
    from world.environment import get_environment
    from world.errors import RecgraphError
    from world.paths import dataset_cache

    if args.users < 1:
        raise RecgraphError(f"--users must be at least 1, got {args.users}")
    env = get_environment(args.dataset)
    users = trainable_users(env)[: args.users]
    if not users:
        raise RecgraphError(
            f"dataset {env.dataset.name!r} has no user with a validation interaction to trace"
        )
    out = Path(args.out) if args.out else dataset_cache(env.dataset) / "chainrec_mining"
    protocol = {
        "dataset": env.dataset.name,
        "candidates": args.candidates,
        "seed": args.seed,
        "llm": args.llm,
        "step_budget": args.max_steps,
    }
    log = open_log(out / "traces.jsonl", protocol)
    tasks = []
    for user in users:
        case = env.cases[user]
        candidates = sample_candidates(
            user_id=user,
            target=case.valid.item_id,
            n=args.candidates,
            catalog=env.item_ids,
            interacted=env.interacted(user),
            seed=args.seed,
        )
        tasks.append(trace_task(env, user, candidates))
    already = len([t for t in tasks if t.user_id in log.done("cot_trace")])
    with llm_session(args, schema=ChainRecContext) as (context, _), progress_bar() as bar:
        context.max_output_tokens = max(context.max_output_tokens, 1500)
        row = bar.add_task("traces", total=len(tasks), completed=already)
        records = asyncio.run(
            generate_traces(tasks, context, log, args.max_steps, args.concurrency, lambda _: bar.advance(row))
        )
    sources: Counter[str] = Counter(record["source"] for record in records)
    repairs: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for record in records:
        repairs.update(record["usage"]["repairs"])
        errors.update(record["usage"]["errors"])
    return out, {
        "backend": describe_backend(args.llm),
        "generated": len(records),
        "skipped_done": already,
        "sources": dict(sources),
        "calls": sum(record["usage"]["calls"] for record in records),
        "input_tokens": sum(record["usage"]["input_tokens"] for record in records),
        "output_tokens": sum(record["usage"]["output_tokens"] for record in records),
        "repairs": dict(repairs),
        "errors": dict(errors),
        "missing": list(tasks[0].missing),
    }


def mine_tools(args: argparse.Namespace) -> int:
    """Generate (or read) traces, mine them, print the sweep and the cards."""
    from agents.chainrec.mining.pipeline import MiningSettings, mine_to
    from agents.chainrec.mining.records import load_traces
    from agents.chainrec.online.library_file import load_library
    from world.errors import RecgraphError
    from world.paths import cache_root

    if not 0 <= args.map_margin < 1:
        raise RecgraphError(f"--map-margin must be in [0, 1), got {args.map_margin}")
    base = load_library(args.base)
    if args.traces:
        traces_path = Path(args.traces)
        out = Path(args.out) if args.out else cache_root() / "chainrec_mining"
    elif args.llm == "heuristic":
        raise RecgraphError(NO_TRACES)
    else:
        out, generation = _generate(args)
        traces_path = out / "traces.jsonl"
        missing = ", ".join(generation["missing"]) or "nothing"
        console.print(
            f"backend: {generation['backend']}; traces generated {generation['generated']} "
            f"(by source: {generation['sources'] or '-'}), already done {generation['skipped_done']}; "
            f"calls {generation['calls']}, input tokens {generation['input_tokens']}, output tokens "
            f"{generation['output_tokens']}, repairs {generation['repairs'] or 0}, failed attempts "
            f"{generation['errors'] or 0}; the dataset lacks: {missing}",
            markup=False,
        )
    traces = load_traces(traces_path)
    library_path = Path(args.library_out) if args.library_out else out / LIBRARY_NAME
    settings = MiningSettings(args.max_steps, args.k_min, args.k_max, args.seed, base, args.map_margin)
    summary, cards, (json_path, md_path), library = mine_to(
        out, traces, settings, library_path, f"mined from {traces_path} over {base.path}"
    )
    counts = summary["traces"]
    dropped = ", ".join(f"{reason} {n}" for reason, n in counts["dropped"].items()) or "none"
    n_dropped = sum(counts["dropped"].values())
    console.print(
        f"{traces_path}: {counts['total']} traces, kept {counts['kept']}, dropped {n_dropped} "
        f"({dropped}); {summary['steps']} steps, {summary['distinct_labels']} distinct labels"
    )
    sweep = "  ".join(f"k={k} {score:.3f}" for k, score in summary["silhouette"].items())
    console.print(f"silhouette: {sweep}  → k = {summary['k']}")
    for card in cards:
        steps = "; ".join(step["label"][:LABEL_SHOWN] for step in card["representative_steps"])
        console.print(
            f"cluster {card['cluster']}: {card['size']} steps → {' / '.join(card['tools'])} "
            f"({card['tool']} {card['tool_score']:.3f}); {steps}",
            markup=False,
        )
    console.print(f"cards → {json_path} and {md_path}")
    unmapped = ", ".join(library.mining["unmapped"]) or "none"
    console.print(
        f"tool library ({len(library.catalog)} tools; no cluster for: {unmapped}) → {library.path}; "
        f"run with it: --set chainrec_library={library.path}",
        markup=False,
    )
    return 0
