"""`--server`: the deployment a bench run sends its users to (bench/run/remote.py), checked before any
heavy work, and what it did reported after."""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.run.remote import RemotePool
    from bench.run.remote_replicas import Replicas
    from bench.run.tracing import BenchTracing


def remote_replicas(args: argparse.Namespace, methods: list[str]) -> Replicas | None:
    """`--server`: the deployment, checked (methods it can run, options, every URL answering and
    serving the graphs); None for an in-process run."""
    if not args.server:
        return None
    from bench.run.remote_checks import check_remote_methods, check_remote_options, connect

    check_remote_methods(methods)
    check_remote_options(args.workers, args.checkpoints, args.llm_cache)
    return connect(args.server, methods, server_key(args))


def server_key(args: argparse.Namespace) -> str | None:
    """The credential sent to the deployment: `--server-key`, else RECGRAPH_SERVER_KEY, else none."""
    return getattr(args, "server_key", None) or os.environ.get("RECGRAPH_SERVER_KEY") or None


def remote_pool(replicas: Replicas | None, tracing: BenchTracing) -> RemotePool | None:
    """The runner's `RemotePool` on `replicas` (None: in-process)."""
    if replicas is None:
        return None
    from bench.run.remote import RemotePool

    return RemotePool(replicas, tracing)


def report_servers(remote: RemotePool, results: dict[str, dict[str, Any]], seconds: float) -> str:
    """Put each method's runs per server and retries into its metrics; the one line saying so."""
    from bench.run.remote import describe_servers

    for method, stats in remote.stats.items():
        if method in results:
            results[method]["servers"] = stats
    return describe_servers(remote, seconds)
