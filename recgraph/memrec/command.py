"""`recgraph memrec rules`: LM_Mem writes, validates and saves a domain's curation rules.
`recgraph memrec feedback`: Stage W on one interaction, applied before the command returns.
`recgraph memrec init`: the optional LM_Mem pass writing users' initial memories."""

from __future__ import annotations

import argparse
from pathlib import Path

from recgraph.options import add_dataset_options
from recgraph.terminal import console
from state.memrec.context import MemRecContext


def register(commands: argparse._SubParsersAction) -> None:
    """Add `recgraph memrec rules|feedback|init` (the registry's CLI hook for MemRec methods)."""
    memrec_parser = commands.add_parser(
        "memrec",
        help="MemRec tools: `memrec rules` writes curation rules; `memrec feedback` runs Stage W on one "
        "interaction; `memrec init` has LM_Mem write users' initial memories",
    )
    memrec_parser.add_argument(
        "action",
        choices=["rules", "feedback", "init"],
        help="rules: write curation rules; feedback: run Stage W on one interaction; init: LM_Mem writes "
        "users' initial memories",
    )
    memrec_parser.add_argument("--out", default=None, help="rules: where to save the rule set (JSON)")
    memrec_parser.add_argument(
        "--user", default=None, help="feedback: the user who interacted; init: only this user"
    )
    memrec_parser.add_argument(
        "--users", type=int, default=None, help="init: only the first N users (by id)"
    )
    memrec_parser.add_argument("--concurrency", type=int, default=8, help="init: LLM calls in flight")
    memrec_parser.add_argument("--item", default=None, help="feedback: the item they interacted with")
    memrec_parser.add_argument(
        "--memory", default="", help="feedback/init: memory graph file (default: the dataset's own)"
    )
    add_dataset_options(memrec_parser)
    memrec_parser.set_defaults(handler=memrec)


def memrec(args: argparse.Namespace) -> int:
    """Dispatch `recgraph memrec <action>`."""
    if args.action == "feedback":
        return feedback(args)
    if args.action == "init":
        return initialise(args)
    return rules(args)


def initialise(args: argparse.Namespace) -> int:
    """The optional LM_Mem pass that writes users' initial memories (resumable)."""
    from agents.backends import describe_backend
    from graphs.memrec.init_pass import initialise_memories
    from recgraph.llm_session import llm_session
    from world.data import natural_key
    from world.environment import get_environment
    from world.errors import RecgraphError

    env = get_environment(args.dataset)
    users = sorted(env.cases, key=natural_key)
    if args.user:
        env.require_user(args.user)
        users = [args.user]
    elif args.users is not None:
        if args.users < 1:
            raise RecgraphError(f"--users must be at least 1, got {args.users}")
        users = users[: args.users]
    with llm_session(args, schema=MemRecContext) as (context, _):
        context.memrec_memory = args.memory
        summary = initialise_memories(env, context, users, args.concurrency)
    console.print(f"backend: {describe_backend(args.llm)}")
    console.print(
        f"{summary['written']} user memories written by the model, {summary['kept']} kept deterministic "
        f"(answers by source: {summary['sources']}), {summary['skipped_done']} already done; "
        f"calls {summary['llm_calls']}, input tokens {summary['input_tokens']}, output tokens "
        f"{summary['output_tokens']}, repairs {summary['repairs']}, failed attempts {summary['errors'] or 0}"
    )
    return 0


def feedback(args: argparse.Namespace) -> int:
    """Propagate one interaction (user, item) through Stage W, synchronously."""
    from rich.markup import escape

    from agents.backends import describe_backend
    from graphs.memrec.write import graph
    from recgraph.llm_session import llm_session
    from world.errors import RecgraphError

    if not args.user or not args.item:
        raise RecgraphError("memrec feedback needs --user and --item")
    with llm_session(args, schema=MemRecContext) as (context, _):
        context.memrec_write_mode = "sync"
        context.memrec_memory = args.memory
        output = graph.invoke({"user_id": args.user, "item_id": args.item}, context=context)
    console.print(f"backend: {describe_backend(args.llm)}")
    for message in output["trace"]:
        console.print(escape(f"{message['role']}: {message['content']}"))
    usage = output["usage"][-1]  # the write; [0] is its Stage R synthesis
    console.print(
        f"LM_Mem write ({usage['source']}): calls {usage['calls']}, input tokens {usage['input_tokens']}, "
        f"output tokens {usage['output_tokens']}, repairs {usage['repair_kinds'] or 0}, "
        f"failed attempts {usage['errors'] or 0}"
    )
    job = output["job"]
    console.print(escape(f"new memory of u:{args.user}: {job['updates'][0]['text']}"))
    return 0


def rules(args: argparse.Namespace) -> int:
    """LM_Mem writes the domain's curation rules; they are validated and saved."""
    from agents.backends import describe_backend
    from agents.base import run_agent
    from agents.memrec.rule_files import load_rule_set
    from agents.memrec.rule_writer import rule_writer_task
    from recgraph.llm_session import llm_session
    from world.environment import get_environment
    from world.paths import dataset_cache

    env = get_environment(args.dataset)
    with llm_session(args, schema=MemRecContext) as (context, _):
        context.max_output_tokens = max(context.max_output_tokens, 1500)
        result = run_agent(rule_writer_task(env), context)
    usage = result.usage
    out = Path(args.out) if args.out else dataset_cache(env.dataset) / "memrec_rules.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(result.output.to_json() + "\n")
    load_rule_set(out)  # what was saved must load back
    outcome = {
        "llm": "rules written by the model",
        "fallback": "the model's rules were invalid after retries: saved the generic set instead",
        "heuristic": "no LLM configured: saved the generic set",
    }[usage.source]
    console.print(f"backend: {describe_backend(args.llm)}")
    console.print(
        f"{outcome}; calls {usage.calls}, input tokens {usage.input_tokens}, output tokens "
        f"{usage.output_tokens}, repairs {usage.repairs} {usage.repair_kinds or ''}, "
        f"failed attempts {usage.errors or 0}"
    )
    console.print(f"{len(result.output.rules)} rules → {out} (use it with Context.memrec_rules)")
    return 0
