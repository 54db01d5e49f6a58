"""MemRec's Stage W in the benchmark: each user's warm-up (validation) interaction is propagated
into the memory graph before any test case of the method is ranked, as the paper's protocol does.

Reproducible whatever the concurrency: every warm-up job is proposed (one LM_Mem call each, run
concurrently) from the same initial memories, logged durably to `<method>.warmup.jsonl`, and only
then applied in user-id order by a synchronous writer. A killed run resumes: logged proposals are
not asked again, and jobs already applied are skipped by id. Each memory method has its own graph
file under `<out>/memrec_memory/`, so methods (and ablations) never see each other's writes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableLambda

from agents.usage import summarise_usage
from bench.data import natural_key
from bench.environment import Environment
from bench.protocol import EvalCase, Protocol
from bench.results_log import ResultsLog
from state.context import Context
from state.memory_writer import MemoryWriter, PropagationJob
from state.memrec_features import feature_index

MEMORY_DIR = "memrec_memory"
"""Sub-folder of `--out` holding the memory graphs and warm-up logs of memory methods."""
WARMUP_FIELDS = (
    "llm_calls",
    "input_tokens",
    "output_tokens",
    "fallbacks",
    "repairs",
    "llm_seconds",
    "errors",
    "repair_kinds",
)
"""Stage W usage totals reported per method in metrics.json (`stage_w`)."""


def memory_context(context: Context, out: Path, method: str, overrides: dict[str, Any]) -> Context:
    """The run's context pointed at the method's own memory graph file (plus its overrides)."""
    folder = out / MEMORY_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return replace(context, memrec_memory=str(folder / f"{method}.sqlite"), **overrides)


def warmup_interaction(env: Environment, case: EvalCase, scenario: str) -> dict[str, Any] | None:
    """The write request of a case's warm-up interaction, or None when the scenario hides it."""
    valid = env.cases[case.user_id].valid
    if valid is None or valid.item_id not in env.history(case.user_id, scenario):
        return None
    return {"user_id": case.user_id, "item_id": valid.item_id, "timestamp": valid.timestamp}


async def propose_warmups(
    env: Environment,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    context: Context,
    log: ResultsLog,
    concurrency: int,
    on_progress: Callable[[int], None] | None = None,
) -> None:
    """Ask Stage W for every warm-up job not yet in `log` (concurrently; nothing is applied);
    `on_progress` gets the number of users with a logged job."""
    from graphs.memrec_write import graph

    done = log.done("stage_w")
    todo = [
        (case, request)
        for case in cases
        if case.user_id not in done
        if (request := warmup_interaction(env, case, protocol.scenario)) is not None
    ]
    propose = replace(context, memrec_write_mode="propose")

    async def invoke(item: tuple[EvalCase, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        case, request = item
        return case.user_id, await graph.ainvoke(request, context=propose)

    runnable = RunnableLambda(invoke, name="stage_w:warmup")
    config = {"max_concurrency": max(1, concurrency)}
    count = 0
    already = len(done)
    async for _, (user, output) in runnable.abatch_as_completed(todo, config=config):
        log.append({"method": "stage_w", "user_id": user, "job": output["job"], "usage": output["usage"]})
        count += 1
        if on_progress:
            on_progress(already + count)


def apply_warmups(env: Environment, context: Context, log: ResultsLog, users: Sequence[str]) -> int:
    """Apply the logged jobs of `users` in user-id order (synchronously); returns how many were new."""
    graph = feature_index(env, context.memrec_memory).graph
    writer = MemoryWriter(graph, synchronous=True)
    before = writer.stats().get("done", 0)
    records = log.done("stage_w")
    for user in sorted((u for u in users if u in records), key=natural_key):
        writer.submit(PropagationJob.from_json(json.dumps(records[user]["job"])))
    return writer.stats().get("done", 0) - before


def warmup_usage(log: ResultsLog, users: Sequence[str]) -> dict[str, Any]:
    """Stage W totals over the users' warm-up jobs (for metrics.json)."""
    records = log.done("stage_w")
    rows = [row for user in users if user in records for row in records[user]["usage"]]
    summary = summarise_usage(rows)
    totals = {field: summary[field] for field in WARMUP_FIELDS}
    totals["jobs"] = sum(1 for user in users if user in records)
    return totals


def prepare_memory_method(
    method: str,
    cases: Sequence[EvalCase],
    protocol: Protocol,
    results: ResultsLog,
    concurrency: int,
    context: Context,
    on_progress: Callable[[str, int], None] | None = None,
) -> tuple[Context, dict[str, Any] | None]:
    """For a memory method: its own memory graph (next to results.jsonl) and, for methods with Stage
    W, the warm-up jobs proposed and applied before ranking. Returns the method's context and its
    Stage W totals (None without Stage W). Other methods get the context unchanged. Warm-up
    progress is reported to `on_progress` as "<method> · Stage W"."""
    from bench.environment import get_environment
    from graphs.registry import METHODS

    spec = METHODS[method]
    if not spec.memory:
        return context, None
    out = results.path.parent
    ctx = memory_context(context, out, method, dict(spec.overrides))
    if spec.memory != "write":
        return ctx, None
    env = get_environment(protocol.dataset)
    log = ResultsLog(out / MEMORY_DIR / f"{method}.warmup.jsonl", protocol.as_dict())
    finished = results.done(method)
    if any(case.user_id not in finished for case in cases):
        hook = (lambda count: on_progress(f"{method} · Stage W", count)) if on_progress else None
        asyncio.run(propose_warmups(env, cases, protocol, ctx, log, concurrency, hook))
        apply_warmups(env, ctx, log, [case.user_id for case in cases])
        # Embed the changed memories once, before ranking, not inside the first timed users.
        feature_index(env, ctx.memrec_memory).updated_vectors()
    return ctx, warmup_usage(log, [case.user_id for case in cases])
