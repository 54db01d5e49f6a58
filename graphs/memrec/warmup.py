"""MemRec's Stage W in the benchmark: each user's warm-up interaction, their latest training
interaction, is propagated through the memory graph (LM_Mem rewrites the user's and the chosen
neighbours' memories) before any test case of the method is ranked. This warm-up write is the
project's protocol choice, not the paper's (the paper evaluates on InstructRec's splits and does not
say which interactions Stage W sees before testing). It never writes the validation interaction:
no learner trains on an evaluated user's validation interaction (docs/benchmarking.md). Each write
runs Stage R first (the
`memrec_write` graph curates N'_k and synthesises the facets with the warm-up item as the
candidate), so the write reads facets, as the authors' code does: two LM_Mem calls per user.

Two schedules (`MemRecContext.memrec_warmup`), both reproducible whatever the concurrency:

- concurrent (default): every warm-up job is proposed (one LM_Mem call each, run concurrently) from
  the same initial memories, logged durably to `<method>.warmup.jsonl`, and only then applied in
  user-id order by a synchronous writer; a rewrite of a node an earlier job changed is merged
  (appended) into it, not applied over it (tools/memrec/jobs.py).
- sequential (Sec. 2.1.3: M_u^t is written from M_u^{t-1}): one write at a time in interaction order
  (`warmup_order`), each proposed from the memories the previous write left, logged, then applied
  before the next one is asked. About `--concurrency` times slower with a hosted LM_Mem.

A killed run resumes: logged proposals are not asked again, and jobs already applied are skipped by
id. Each memory method has its own graph file under `<out>/memrec_memory/`, so methods (and
ablations) never see each other's writes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.memrec.feature_index import feature_index
from agents.memrec.read_ahead import PROGRESS_LABEL as READ_AHEAD
from agents.memrec.read_ahead import read_ahead
from agents.memrec.user_vectors import user_vectors
from agents.memrec.write import write_job_id
from agents.usage import summarise_usage
from graphs.concurrency import run_concurrently
from graphs.hooks import Prepared, PrepareRequest
from graphs.memrec.overlap import SpeculativeEmbedding, preload_embedder
from graphs.memrec.whole_run import median_call_seconds, start_clock
from graphs.tracing import protocol_run_config
from state.context import backend_for
from state.memrec.context import MemRecContext
from tools.memrec.writer import MemoryWriter, PropagationJob
from world.data import natural_key
from world.environment import Environment, get_environment
from world.results_log import ResultsLog

MEMORY_DIR = "memrec_memory"
"""Sub-folder of `--out` holding the memory graphs and warm-up logs of memory methods."""
WARMUP_FIELDS = (
    "llm_attempts",
    "llm_calls",
    "llm_answers",
    "input_tokens",
    "output_tokens",
    "fallbacks",
    "repairs",
    "llm_seconds",
    "errors",
    "repair_kinds",
)
"""Stage W usage totals reported per method in metrics.json (`stage_w`)."""


def memory_context(context: MemRecContext, out: Path, method: str) -> MemRecContext:
    """The run's context pointed at the method's own memory graph file."""
    folder = out / MEMORY_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return replace(context, memrec_memory=str(folder / f"{method}.sqlite"))


def warmup_interaction(env: Environment, user_id: str, scenario: str) -> dict[str, Any] | None:
    """The write request of a user's warm-up interaction: their latest training interaction (never
    the validation one: no learner trains on an evaluated user's validation interaction,
    docs/benchmarking.md), or None when the user has none or the scenario hides it."""
    history = env.cases[user_id].history
    if not history or history[-1].item_id not in env.history(user_id, scenario):
        return None
    latest = history[-1]
    item, when = latest.item_id, latest.timestamp
    return {"user_id": user_id, "item_id": item, "timestamp": when, "scenario": scenario}


def warmup_order(env: Environment, users: Sequence[str], scenario: str) -> list[tuple[str, dict[str, Any]]]:
    """(user, write request) of the users with a warm-up interaction, in interaction order: by its
    timestamp, ties by user id; on order-only data (positions, not times) by user id alone."""
    found = [(u, r) for u in users if (r := warmup_interaction(env, u, scenario)) is not None]
    if env.dataset.has_time:
        return sorted(found, key=lambda pair: (pair[1]["timestamp"], natural_key(pair[0])))
    return sorted(found, key=lambda pair: natural_key(pair[0]))


def job_of(record: dict[str, Any]) -> PropagationJob:
    """The `PropagationJob` of a logged warm-up record."""
    return PropagationJob.from_json(json.dumps(record["job"]))


async def write_in_order(
    env: Environment,
    users: Sequence[str],
    scenario: str,
    context: MemRecContext,
    log: ResultsLog,
    on_progress: Callable[[int], None] | None = None,
    trace: Callable[[str], RunnableConfig] | None = None,
) -> None:
    """The sequential warm-up: in `warmup_order`, each user's job is taken from `log` or proposed
    from the current memories and logged, then applied before the next user's write is asked;
    `on_progress` gets the number of users written."""
    from graphs.memrec.write import graph

    writer = MemoryWriter(feature_index(env, context.memrec_memory).graph, synchronous=True)
    propose = replace(context, memrec_write_mode="propose")
    for count, (user, request) in enumerate(warmup_order(env, users, scenario), 1):
        if user not in log.done("stage_w"):
            config = trace(user) if trace else None
            output = await graph.ainvoke(request, config=config, context=propose)
            log.append({"method": "stage_w", "user_id": user, "job": output["job"], "usage": output["usage"]})
        writer.submit(job_of(log.done("stage_w")[user]))
        if on_progress:
            on_progress(count)


async def propose_warmups(
    env: Environment,
    users: Sequence[str],
    scenario: str,
    context: MemRecContext,
    log: ResultsLog,
    concurrency: int,
    on_progress: Callable[[int], None] | None = None,
    trace: Callable[[str], RunnableConfig] | None = None,
    on_job: Callable[[str, dict[str, Any]], None] | None = None,
) -> None:
    """Ask Stage W for every warm-up job not yet in `log` (concurrently; nothing is applied);
    `on_progress` gets the number of users with a logged job; `trace(user)` configures each
    user's run (one root run per user, linked to the method by its tags and metadata); `on_job`
    gets each (user, job) once logged."""
    from graphs.memrec.write import graph

    done = log.done("stage_w")
    todo = [
        (user, request)
        for user in users
        if user not in done
        if (request := warmup_interaction(env, user, scenario)) is not None
    ]
    propose = replace(context, memrec_write_mode="propose")

    async def invoke(item: tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        user, request = item
        config = trace(user) if trace else None
        return user, await graph.ainvoke(request, config=config, context=propose)

    count = 0
    already = len(done)

    def record(proposed: tuple[str, dict[str, Any]]) -> None:
        nonlocal count
        user, output = proposed
        log.append({"method": "stage_w", "user_id": user, "job": output["job"], "usage": output["usage"]})
        if on_job:
            on_job(user, output["job"])
        count += 1
        if on_progress:
            on_progress(already + count)

    await run_concurrently(todo, invoke, record, concurrency)


def apply_warmups(env: Environment, context: MemRecContext, log: ResultsLog, users: Sequence[str]) -> int:
    """Apply the logged jobs of `users` in user-id order (synchronously); returns how many were new."""
    graph = feature_index(env, context.memrec_memory).graph
    writer = MemoryWriter(graph, synchronous=True)
    before = writer.stats().get("done", 0)
    records = log.done("stage_w")
    for user in sorted((u for u in users if u in records), key=natural_key):
        writer.submit(job_of(records[user]))
    return writer.stats().get("done", 0) - before


def applied_elsewhere(
    env: Environment, context: MemRecContext, users: Sequence[str], scenario: str
) -> set[str]:
    """Users whose warm-up job is already applied to this memory by another process (a memory in a
    shared database): this process ranks on their result instead of asking LM_Mem again."""
    graph = feature_index(env, context.memrec_memory).graph
    if not graph.shared:
        return set()
    graph.store.create_queue()  # a read only: no writer, which would also apply any pending jobs
    done = graph.store.done_jobs("w-")
    found = set()
    for user in users:
        request = warmup_interaction(env, user, scenario)
        if request is not None:
            job = write_job_id(env.dataset.name, user, request["item_id"], request["timestamp"])
            if job in done:
                found.add(user)
    return found


def warmup_usage(log: ResultsLog, users: Sequence[str]) -> dict[str, Any]:
    """Stage W totals over the users' warm-up jobs (for metrics.json)."""
    records = log.done("stage_w")
    rows = [row for user in users if user in records for row in records[user]["usage"]]
    summary = summarise_usage(rows)
    totals = {field: summary[field] for field in WARMUP_FIELDS}
    totals["jobs"] = sum(1 for user in users if user in records)
    return totals


def with_stage_w(request: PrepareRequest) -> Prepared:
    """`prepare` hook of MemRec methods with Stage W: their own memory graph (next to
    results.jsonl), and each user's warm-up job proposed and applied before ranking. Warm-up
    progress is reported as "<method> · Stage W"; metrics.json gets the `stage_w` totals and the
    `whole_run` figures (graphs/memrec/whole_run.py).

    MiniLM loads, and (with an LM_Mem to wait for) the memories the logged proposals will produce
    are embedded, while the remaining proposals are asked (graphs/memrec/overlap.py). The memories
    the users' curations will read are then read ahead, once (agents/memrec/read_ahead.py); any
    other changed memory is embedded when a ranking first reads it (agents/memrec/changed_vectors.py)."""
    started = time.perf_counter()
    ctx = memory_context(request.context, request.work_dir, request.method)
    env = get_environment(ctx.dataset)
    users = list(request.users)
    log = ResultsLog(request.work_dir / MEMORY_DIR / f"{request.method}.warmup.jsonl", request.protocol)
    metrics: dict[str, Any] = {}
    if any(user not in request.ranked for user in users):
        preload_embedder()
        vectors = user_vectors(env)  # Stage W's curations read the memories they need (embedded now)
        read_before, seconds_before = vectors.texts_read(), vectors.seconds
        index = feature_index(env, ctx.memrec_memory)
        changed_before = index.changed_read
        elsewhere = applied_elsewhere(env, ctx, users, request.scenario)
        if elsewhere:
            metrics["stage_w_applied_elsewhere"] = len(elsewhere)
        mine = [u for u in users if u not in elsewhere]
        warm = [u for u in mine if warmup_interaction(env, u, request.scenario) is not None]
        logged = log.done("stage_w")
        asked = sum(user not in logged for user in warm)
        sequential = ctx.memrec_warmup == "sequential"
        clock = start_clock(started, ctx.memrec_memory, 1 if sequential else request.concurrency, asked, ctx)
        # Without an LM_Mem to wait for there is nothing to overlap, and a sequential write reads the
        # memories the previous one left (embedded on first sight): no speculation.
        overlap = backend_for(ctx, "mem") != "heuristic" and not sequential
        speculation = SpeculativeEmbedding(index, warm if overlap else [])
        for user in warm:
            if user in logged:
                speculation.arrived(user, logged[user]["job"])
        progress = request.on_progress
        label = f"{request.method} · Stage W"
        hook = (lambda count: progress(label, count + len(elsewhere), len(users))) if progress else None
        trace = partial(
            protocol_run_config, request.protocol, request.method, name="memrec_write", phase="stage_w"
        )
        ask = (
            write_in_order(env, mine, request.scenario, ctx, log, hook, trace)
            if sequential
            else propose_warmups(
                env, mine, request.scenario, ctx, log, request.concurrency, hook, trace, speculation.arrived
            )
        )
        try:
            asyncio.run(ask)
        except BaseException:
            speculation.abandon()
            raise
        ahead = speculation.finish()  # before applying: predictions are made from the unapplied memories
        if not sequential:  # (the sequential schedule applied each job as it went)
            apply_warmups(env, ctx, log, users)
        # The changed memories are embedded when a curation or ranking first reads them, each text on
        # its own (agents/memrec/changed_vectors.py): only those the evaluated users' rankings read.
        records = log.done("stage_w")
        rows = [row for user in warm if user in records for row in records[user]["usage"]]
        clock.warmed(time.perf_counter() - started, median_call_seconds(rows), ahead)
        metrics["whole_run"] = clock.figures
        metrics["stage_w_user_memories_read"] = {
            "texts": vectors.texts_read() - read_before,
            "seconds": round(vectors.seconds - seconds_before, 3),
            "changed_texts": index.changed_read - changed_before,
        }
        pending = [user for user in users if user not in request.ranked]
        ahead = f"{request.method} · {READ_AHEAD}"
        reads = (lambda done, total: progress(ahead, done, total)) if progress else None
        metrics["read_ahead"] = read_ahead(env, ctx, pending, request.scenario, reads)
    return Prepared(ctx, {"stage_w": warmup_usage(log, users), **metrics})
