"""AMEM4Rec in the harness: the `prepare` hook trains (or reuses) each method's pool before any user
is ranked; under `bench perf`, `perf_prepare` trains a small pool (measuring training throughput
against the same simulator) that the timed ranking then reads.

Bench pools live under `<out>/amem4rec_pool/<method>-<key>/`, the key a digest of the pool
configuration, the run's protocol (dataset, candidates, seed, scenario, users, llm), the users
trained on, the window cap and the memory backend: a rerun of the same command reuses (or resumes)
its pool; any other setting gets a folder of its own, so nothing is overwritten. Beside them,
`extractions-<key>/` is the extraction stage the four methods share (`extraction_stage`). Windows come from
the users under test (the paper trains and evaluates on the same users), training part only, read
from the run's world (world/evaluation_world.py). Under cold_user and cold_start the users under test
have no more than their visible items there, so other users' windows join them (`pool_users`): the
paper's cold-start users are served by a pool built from other users' behaviour.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig

from agents.amem4rec.retrieval import embed_queries, history_query, recent_items
from agents.amem4rec.windows import WindowRef
from graphs.amem4rec.extraction import stage_key
from graphs.amem4rec.training import train_pool, training_summary
from graphs.hooks import PerfRequest, Prepared, PrepareRequest
from graphs.tracing import protocol_run_config
from state.amem4rec.context import Amem4RecContext
from state.context import backend_for
from tools.amem4rec.extraction_stage import ExtractionStage
from tools.amem4rec.folder import MANIFEST, config_key, forget_pool, pool_config
from world.data import natural_key
from world.environment import Environment, get_environment
from world.evaluation_world import has_world

POOL_DIR = "amem4rec_pool"
"""Sub-folder of `--out` holding the AMEM4Rec methods' pools."""
PERF_WINDOWS_PER_USER = 2
"""`bench perf` trains on at most this many windows per user (the latest ones)."""


def bench_pool_key(context: Amem4RecContext, protocol: dict[str, Any], users: list[str]) -> str:
    """What a bench pool is keyed by (see the module docstring), as a short digest."""
    return config_key(
        {
            "config": pool_config(context),
            "protocol": protocol,
            "users": sorted(users, key=natural_key),
            "windows_per_user": context.amem4rec_windows_per_user,
            "mem": backend_for(context, "mem"),
        }
    )


def pool_users(env: Environment, request: PrepareRequest, window: int) -> list[str]:
    """Whose training windows a bench pool is trained on (`training_users` for the request)."""
    seed = int(request.protocol.get("seed", 0))
    return training_users(env, request.users, request.scenario, seed, window)


def training_users(
    env: Environment, users: Sequence[str], scenario: str, seed: int, window: int
) -> list[str]:
    """Whose training windows a bench pool is trained on: the users under test; in a scenario with a
    world of its own (cold_user, cold_start: world/evaluation_world.py) also as many other users of
    that world with at least one window, a sample seeded by the protocol's seed, in id order."""
    users = list(users)
    if not has_world(scenario):
        return users
    tested = set(users)
    others = [u for u, case in env.cases.items() if u not in tested and len(case.history) >= window]
    others.sort(key=natural_key)
    order = np.random.default_rng(seed).permutation(len(others))
    return [*users, *sorted((others[i] for i in order[: len(users)]), key=natural_key)]


def window_trace(request: PrepareRequest, ref: WindowRef) -> RunnableConfig:
    """The root-run config of one training window of a bench run (in-process or on a deployment):
    it names the method, the user and the window."""
    return protocol_run_config(
        request.protocol,
        request.method,
        ref.user_id,
        name="amem4rec_train",
        phase="training",
        extra={"window": ref.key},
    )


def extraction_stage(request: PrepareRequest, users: list[str]) -> ExtractionStage:
    """The run's extraction stage for the request's extraction knobs, beside its pools: the same for
    the four AMEM4Rec methods (their knobs differ in later steps only), another for other knobs."""
    key = stage_key(request.context, dict(request.protocol), sorted(users, key=natural_key))
    return ExtractionStage(request.work_dir / POOL_DIR / f"extractions-{config_key(key)}", key)


def train_for_bench(request: PrepareRequest) -> Prepared:
    """`prepare` hook: the method's pool trained on the users' training windows; its progress shows
    as "<method> · training"; metrics.json gets `training` (pool statistics and cost)."""
    env = get_environment(request.context.dataset)  # the run's world
    users = pool_users(env, request, request.context.amem4rec_window)
    key = bench_pool_key(request.context, dict(request.protocol), users)
    folder = request.work_dir / POOL_DIR / f"{request.method}-{key}"
    existed = (folder / MANIFEST).is_file()
    context = replace(request.context, amem4rec_pool=str(folder))
    label = f"{request.method} · training"
    progress = request.on_progress
    hook = (lambda done, total: progress(label, done, total)) if progress else None

    stage = extraction_stage(request, users)
    try:
        trace = partial(window_trace, request)
        run = train_pool(env, context, users, request.concurrency, hook, trace, stage)
    finally:
        stage.close()
    summary = training_summary(run)
    summary["reused"] = existed and run.applied_now == 0
    embed_user_queries(env, context, [u for u in request.users if u not in request.ranked], request.scenario)
    return Prepared(context, {"training": summary})


def embed_user_queries(
    env: Environment, context: Amem4RecContext, users: Sequence[str], scenario: str
) -> int:
    """The retrieval queries of `users` (their recent visible history), embedded in large batches
    before ranking and saved in the pool's folder for other processes (agents/amem4rec/retrieval.py);
    returns how many were embedded now."""
    queries = [
        history_query(env, recent_items(env.history(u, scenario), context.amem4rec_recent_items))
        for u in users
    ]
    return embed_queries(queries, Path(context.amem4rec_pool))


def ideal_windows_per_s(
    run_rounds: list[list[str]], window_calls: dict[str, int], call_seconds: float
) -> float:
    """Rounds run one after another, each as long as its longest chain of calls: windows / that time."""
    chain = math.fsum(
        max((window_calls.get(k, 0) for k in keys), default=0) * call_seconds for keys in run_rounds
    )
    windows = sum(len(keys) for keys in run_rounds)
    return windows / chain if chain > 0 else math.inf


def train_for_perf(request: PrepareRequest) -> Prepared:
    """`perf_prepare` hook: a fresh pool trained in the scratch folder on the perf users' latest
    windows against the same simulator at the same concurrency, so the timed ranking reads memories;
    figures: windows per second, LLM calls per window, and the ideal throughput of the round schedule
    at the measured call latency."""
    env = get_environment(request.context.dataset)
    folder = request.work_dir / POOL_DIR
    context = replace(
        request.context, amem4rec_pool=str(folder), amem4rec_windows_per_user=PERF_WINDOWS_PER_USER
    )
    run = train_pool(env, context, list(request.users), request.concurrency)
    embed_user_queries(env, context, request.users, request.scenario)
    summary = training_summary(run)
    this_run = summary["this_run"]
    calls = this_run["llm_calls"]
    call_seconds = math.fsum(r["llm_seconds"] for r in run.usage) / calls if calls else 0.0
    ideal = ideal_windows_per_s(run.rounds, run.window_calls, call_seconds)
    return Prepared(
        context,
        {
            "training_windows": this_run["windows"],
            "training_windows_per_s": this_run["windows_per_s"],
            "training_ideal_windows_per_s": ideal if math.isfinite(ideal) else None,
            "training_llm_calls_per_window": calls / this_run["windows"] if this_run["windows"] else 0.0,
            "training_agent_calls_per_window": summary["agent_calls_per_window"],
            "training_mean_call_seconds": call_seconds,
            "training_round_windows": context.amem4rec_round_windows,
            "training_actions": summary["actions"],
        },
    )


def ranking_perf(request: PerfRequest) -> dict[str, Any]:
    """`perf_extras` hook: the pool size the timed ranking read; then the perf pool is closed (its
    scratch folder is removed after the method)."""
    forget_pool(Path(request.context.amem4rec_pool))
    sizes = [(output.get("details") or {}).get("pool_size", 0) for output in request.outputs]
    return {"ranking_pool_size": max(sizes, default=0)}
