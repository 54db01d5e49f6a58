"""What `--server` checks before any work: methods it can run, options it cannot take, and that
every URL answers and serves the graphs the run needs (bench/run/remote.py runs the methods)."""

from __future__ import annotations

from collections.abc import Sequence

from bench.run.remote_replicas import Replicas, split_servers
from graphs.registry import METHODS, SERVICE_GRAPHS
from world.errors import ProtocolError


def check_remote_methods(methods: Sequence[str]) -> None:
    """Refuse, in one line, a method whose prepare step has no remote variant."""
    local = [m for m in methods if METHODS[m].prepare and not METHODS[m].remote_prepare]
    if local:
        needs = METHODS[local[0]].trained_state or "state its prepare step writes locally"
        raise ProtocolError(
            f"{', '.join(local)} cannot run on a LangGraph server: {local[0]} needs {needs}, which "
            "only an in-process run builds; run it without --server"
        )


def check_remote_options(workers: int, checkpoints: bool, llm_cache: str) -> None:
    """Refuse the in-process-only options under --server (one line each)."""
    if workers > 1:
        raise ProtocolError("--server runs users on the deployment: use it without --workers")
    if checkpoints:
        raise ProtocolError(
            "--checkpoints keeps threads of in-process runs; a LangGraph deployment keeps its own: "
            "use it without --server"
        )
    if llm_cache:
        raise ProtocolError("--llm-cache replays this process's LLM calls; the servers make them: drop it")


def service_graphs_of(methods: Sequence[str]) -> list[str]:
    """The service graphs the methods' remote prepare hooks drive (by room: memrec_* -> memrec_…)."""
    rooms = {METHODS[m].graph.split(".")[1] for m in methods if METHODS[m].remote_prepare}
    return [name for name, spec in SERVICE_GRAPHS.items() if spec.graph.split(".")[1] in rooms]


def connect(servers: str, methods: Sequence[str], key: str | None = None) -> Replicas:
    """The deployment at `servers` ("URL[,URL…]"), each URL checked to answer, accept `key` (the
    `--server-key` credential, if any) and serve the methods' graphs (one line and exit 2 otherwise,
    within `PROBE_SECONDS` per URL)."""
    replicas = Replicas(split_servers(servers), key=key)
    replicas.check([*methods, *service_graphs_of(methods)])
    return replicas
