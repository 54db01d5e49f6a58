"""AgentCF in the harness: the `prepare` hook trains (or reuses, or resumes) the agents' memories of
the users under test before any user is ranked, and points the ranking at them; `llm_calls` plans
the LLM requests per user."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from langchain_core.runnables import RunnableConfig

from agents.agentcf.plan import Interaction
from graphs.agentcf.training import train_memories, training_summary
from graphs.hooks import CallPlan, Prepared, PrepareRequest
from graphs.tracing import protocol_run_config
from state.agentcf.context import AgentCFContext
from world.environment import get_environment


def train_for_bench(request: PrepareRequest) -> Prepared:
    """`prepare` hook: the memories trained on the users' training interactions (graphs/agentcf/
    training.py), shown as "<method> · training"; metrics.json gets `training` (accuracy of the
    user agents' choices, reflections, cost, the checkpoint file and whether it was reused). Also
    `bench perf`'s `perf_prepare`: the perf users' memories are trained against the same simulator
    first (kept in the cache like any), so the timed ranking reads trained memories."""
    ctx = request.context
    assert isinstance(ctx, AgentCFContext)
    env = get_environment(ctx.dataset)  # the run's world
    label = f"{request.method} · training"
    progress = request.on_progress
    hook = (lambda done, total: progress(label, done, total)) if progress else None
    trace = partial(interaction_trace, request)
    run = train_memories(env, ctx, list(request.users), request.concurrency, hook, trace)
    return Prepared(replace(ctx, agentcf_memory=str(run.path)), {"training": training_summary(run)})


def interaction_trace(request: PrepareRequest, step: Interaction) -> RunnableConfig:
    """The root-run config of one training interaction of a bench run (in-process or on a
    deployment): it names the method, the user and the position."""
    return protocol_run_config(
        request.protocol,
        request.method,
        step.user_id,
        name="agentcf_train",
        phase="training",
        extra={"position": step.position},
    )


def agentcf_calls(context: AgentCFContext, candidates: int) -> CallPlan:
    """One ranking request, and at most 3 per round (choice, user and item reflection) for each
    replayed training interaction: their number is `agentcf_interactions_per_user` when set (fewer
    for a user with a shorter history, none when the memories are already trained)."""
    per_interaction = 3 * max(1, context.agentcf_rounds)
    replayed = context.agentcf_interactions_per_user
    if replayed <= 0:
        return CallPlan(1, note=f"plus up to {per_interaction} training calls per training interaction")
    note = "training included, if not trained yet"
    return CallPlan(1 + replayed * per_interaction, at_most=True, note=note)
