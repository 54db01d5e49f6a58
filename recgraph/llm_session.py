"""Turning `--llm` options into a `Context`, starting the loopback simulator when asked."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.protocol.knob_settings import OWN_OPTIONS, option_dest
from state.context import Context

SIM_TIMEOUT = 2.0
"""Client timeout with the simulator: its 'timeout' fault answers one second later."""


def context_from_args(args: argparse.Namespace, schema: type[Context] = Context, **overrides: Any) -> Context:
    """The run's context from the shared dataset and LLM options: the common `Context`, or a method
    family's class (`schema`) when a family's command needs its knobs."""
    fields: dict[str, Any] = {"max_connection_failures": Context.max_connection_failures}  # optional
    for name, option in OWN_OPTIONS.items():  # every knob bench sets from an option of its own
        if name not in fields or hasattr(args, option_dest(option)):
            fields[name] = getattr(args, option_dest(option))
    fields["llm_timeout"] = args.llm_timeout or (SIM_TIMEOUT if args.llm == "sim" else 60.0)
    if args.llm == "sim":
        fields["llm_backoff"] = 0.05  # the simulator's 429s carry retry-after: 0
    fields.update(overrides)
    return schema(**fields)


@contextmanager
def llm_session(
    args: argparse.Namespace, latency: float | None = None, schema: type[Context] = Context
) -> Iterator[tuple[Context, Any]]:
    """Yield the run's context (of class `schema`) and, for `--llm sim`, the running simulator
    (stopped after)."""
    from agents.backends import check_backend, enable_llm_cache, preflight
    from agents.breaker import reset_breakers

    check_backend(args.llm)
    reset_breakers()  # a new run starts with no failures counted (several runs share a test process)
    if args.llm_cache:
        enable_llm_cache(args.llm_cache)
    context = context_from_args(args, schema)
    if args.llm != "sim":
        preflight(context)
        yield context, None
        return
    from llmsim.process import SimServer

    server = SimServer(
        latency=args.sim_latency if latency is None else latency,
        fault_rate=args.faults,
        faults=args.fault_kinds,
        timeout_delay=context.llm_timeout + 1.0,
        seed=args.seed,
    )
    with server:
        context.base_url = server.base_url
        preflight(context)
        yield context, server
