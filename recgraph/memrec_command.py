"""`recgraph memrec rules`: LM_Mem writes, validates and saves a domain's curation rules."""

from __future__ import annotations

import argparse
from pathlib import Path

from recgraph.commands import console


def memrec(args: argparse.Namespace) -> int:
    """Dispatch `recgraph memrec <action>`."""
    from agents.backends import describe_backend
    from agents.base import run_agent
    from agents.memrec_rule_writer import rule_writer_task
    from bench.environment import get_environment
    from bench.paths import dataset_cache
    from recgraph.llm_session import llm_session
    from state.memrec_rules import load_rule_set

    env = get_environment(args.dataset)
    with llm_session(args) as (context, _):
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
