"""MemRec's Stage W when the users are ranked on a LangGraph deployment (`recgraph bench --server`).

The in-process warm-up's schedule (graphs/memrec/warmup.py), with every write done by the deployment:

1. each warm-up interaction goes to the `memrec_write` assistant in "propose" mode (concurrently,
   on any replica: nothing is applied, so every job is proposed from the initial memories); the
   client logs each job in `<out>/memrec_memory/<method>.warmup.jsonl` (a rerun asks no job twice);
2. the logged jobs go, in user-id order, to the `memrec_apply` assistant, which applies them to the
   method's memory on the server (graphs/memrec/remote_apply.py).

Under `memrec_warmup=sequential` the two steps alternate, one user at a time in `warmup_order`:
propose one write, log it, apply it, then ask the next (which reads the memory that write left).

The memory is named by `remote_name` (per output folder and method), so the served `memrec` graph
on every replica reads it. Replicas read one memory only when it is in a shared database (servers
started with `RECGRAPH_DATABASE_URL`): with several URLs and a per-server SQLite memory the run is
refused before any job is asked.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from graphs.hooks import Prepared, PrepareRequest
from graphs.memrec.warmup import MEMORY_DIR, warmup_interaction, warmup_order, warmup_usage
from graphs.method_spec import RemoteCall, RemoteRunner, remote_name, run_one
from graphs.tracing import protocol_run_config
from state.memrec.context import MemRecContext
from world.data import natural_key
from world.environment import get_environment
from world.errors import RecgraphError
from world.results_log import ResultsLog


def remote_memory(request: PrepareRequest) -> MemRecContext:
    """The run's context pointed at the method's memory on the deployment."""
    name = remote_name(request.work_dir, MEMORY_DIR, f"{request.method}.sqlite")
    return replace(request.context, memrec_memory=name)  # type: ignore[type-var]


def apply_remotely(remote: RemoteRunner, ctx: MemRecContext, jobs: list[dict[str, Any]]) -> dict[str, Any]:
    """`memrec_apply` on one replica: `jobs` applied in order; its answer (applied, memory, shared)."""
    return run_one(remote, RemoteCall("memrec_apply", {"jobs": jobs}, ctx))


def check_shared(remote: RemoteRunner, ctx: MemRecContext, method: str) -> None:
    """Refuse several replicas that would each keep their own copy of the memory."""
    answer = apply_remotely(remote, ctx, [])
    if len(remote.servers) > 1 and not answer["shared"]:
        raise RecgraphError(
            f"{method}'s memory on the servers is a local file ({answer['memory']}), so "
            f"{len(remote.servers)} replicas would not share it: start them with RECGRAPH_DATABASE_URL "
            "(one PostgreSQL), or pass one --server URL"
        )


def with_stage_w_remote(request: PrepareRequest, remote: RemoteRunner) -> Prepared:
    """`remote_prepare` of MemRec methods with Stage W (see the module docstring); progress shows as
    "<method> · Stage W"; metrics.json gets the `stage_w` totals, as in-process."""
    ctx = remote_memory(request)
    env = get_environment(ctx.dataset)
    users = list(request.users)
    (request.work_dir / MEMORY_DIR).mkdir(parents=True, exist_ok=True)  # the client's log of proposals
    log = ResultsLog(request.work_dir / MEMORY_DIR / f"{request.method}.warmup.jsonl", request.protocol)
    if all(user in request.ranked for user in users):
        return Prepared(ctx, {"stage_w": warmup_usage(log, users)})
    check_shared(remote, ctx, request.method)
    done = log.done("stage_w")
    todo = [
        (user, interaction)
        for user in users
        if user not in done
        if (interaction := warmup_interaction(env, user, request.scenario)) is not None
    ]
    propose = replace(ctx, memrec_write_mode="propose")
    calls = [
        RemoteCall(
            "memrec_write",
            interaction,
            propose,
            protocol_run_config(request.protocol, request.method, user, name="memrec_write", phase="stage_w"),
            user,
        )
        for user, interaction in todo
    ]
    count, progress = len(done), request.on_progress
    label = f"{request.method} · Stage W"

    def logged(call: RemoteCall, output: dict[str, Any]) -> None:
        nonlocal count
        job, usage = output["job"], output["usage"]
        log.append({"method": "stage_w", "user_id": call.user, "job": job, "usage": usage})
        count += 1
        if progress:
            progress(label, count, len(users))

    if ctx.memrec_warmup == "sequential":
        waiting = {call.user: call for call in calls}
        for user, _ in warmup_order(env, users, request.scenario):
            if user in waiting:
                remote.run_all([waiting[user]], logged, 1)
            apply_remotely(remote, ctx, [log.done("stage_w")[user]["job"]])
        return Prepared(ctx, {"stage_w": warmup_usage(log, users)})
    remote.run_all(calls, logged, request.concurrency)
    records = log.done("stage_w")
    jobs = [records[user]["job"] for user in sorted((u for u in users if u in records), key=natural_key)]
    apply_remotely(remote, ctx, jobs)
    return Prepared(ctx, {"stage_w": warmup_usage(log, users)})
