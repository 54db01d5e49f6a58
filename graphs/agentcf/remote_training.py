"""AgentCF's training when the users are ranked on a LangGraph deployment (`recgraph bench --server`).

The in-process driver's steps (graphs/agentcf/training.py), with every model call made by the
deployment: a step's interactions go to the `agentcf_train` assistant (concurrently, all from the
memories as the step began), their proposals are committed in user order by the client, with the
in-process `commit`, and the memories are then sent to `agentcf_commit`
(graphs/agentcf/remote_commit.py), which writes them to the file the served `agentcf` graphs read.
What a step reads depends only on the plan, so the memories are those an in-process run with the
same settings trains, and so are the rankings.

Resume: the first `agentcf_commit` call, with no memories, returns what the server's file holds; the
run continues after its `steps_done`. The file is named by `remote_name` (per output folder and
training key) and lives on the server's disk, so the run is refused before training when more than
one replica is given (they would not share it).
"""

from __future__ import annotations

import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from agents.agentcf.plan import Interaction, plan_steps
from graphs.agentcf.hooks import interaction_trace
from graphs.agentcf.training import (
    TrainingRun,
    end_step,
    memory_key,
    remaining_steps,
    report_progress,
    request_for,
    training_summary,
)
from graphs.hooks import Prepared, PrepareRequest
from graphs.method_spec import RemoteCall, RemoteRunner, remote_name, run_one
from state.agentcf.context import AgentCFContext
from tools.agentcf.store import Memories
from world.environment import Environment, get_environment
from world.errors import RecgraphError


def saved_remotely(remote: RemoteRunner, context: AgentCFContext, memories: Memories | None) -> Memories:
    """`agentcf_commit` on one replica: `memories` written (None: nothing); what the file holds."""
    payload = {} if memories is None else {"memories": asdict(memories)}
    return Memories(**run_one(remote, RemoteCall("agentcf_commit", payload, context))["memories"])


def train_remotely(request: PrepareRequest, remote: RemoteRunner) -> Prepared:
    """`remote_prepare` hook: the memories trained through the deployment (module docstring);
    progress shows as "<method> · training"; metrics.json gets `training`, as in-process."""
    started = time.perf_counter()
    ctx = request.context
    assert isinstance(ctx, AgentCFContext)
    if len(remote.servers) > 1:
        raise RecgraphError(
            f"{request.method} keeps its trained memories in a file on the server, which "
            f"{len(remote.servers)} replicas would not share: pass one --server URL"
        )
    env = get_environment(ctx.dataset)  # the run's world
    plan = plan_steps(env, list(request.users), ctx)
    key = memory_key(ctx, plan)
    context = replace(ctx, agentcf_memory=remote_name(request.work_dir, "agentcf", f"memories-{key}.json"))
    memories = saved_remotely(remote, context, None)
    memories.key = key
    run = TrainingRun(memories, Path(context.agentcf_memory), plan, steps_before=memories.steps_done)
    label = f"{request.method} · training"
    progress = (lambda done, total: request.on_progress(label, done, total)) if request.on_progress else None
    report_progress(run, progress)
    outputs: dict[str, dict[str, Any]] = {}

    def done(call: RemoteCall, output: dict[str, Any]) -> None:
        outputs[str(call.user)] = output

    for index, step in remaining_steps(run):
        outputs.clear()
        calls = [_call(env, memories, interaction, ctx, request) for interaction in step]
        remote.run_all(calls, done, request.concurrency)
        end_step(env, run, index, outputs, lambda held: saved_remotely(remote, context, held), progress)
    run.seconds = time.perf_counter() - started
    return Prepared(context, {"training": training_summary(run)})


def _call(
    env: Environment, memories: Memories, step: Interaction, ctx: AgentCFContext, request: PrepareRequest
) -> RemoteCall:
    """One interaction as a run of the served `agentcf_train` (its memories in the input)."""
    return RemoteCall(
        "agentcf_train", request_for(env, memories, step), ctx, interaction_trace(request, step), step.user_id
    )
