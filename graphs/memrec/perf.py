"""MemRec's extra `bench perf` figures: curation latency at the dataset's scale and tokens per stage
(Stage R synthesis, ReRank, Stage W) for comparison with the paper's Table 8."""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, cast

import numpy as np
from langchain_core.runnables import RunnableLambda

from agents.memrec.curation import curate, resolve_rule_set
from agents.memrec.feature_index import feature_index
from agents.memrec.read_ahead import read_ahead
from graphs.hooks import PerfRequest, Prepared, PrepareRequest
from graphs.memrec.warmup import warmup_interaction
from state.memrec.context import MemRecContext
from world.environment import get_environment

PAPER_TABLE_8 = {
    "synthesise": {"input": 2800, "output": 400},
    "rerank": {"input": 1500, "output": 500},
    "propagate": {"input": 3800, "output": 700},
}
"""Tokens per user in MemRec's Table 8 (Stage R, ReRank, Stage W; GPT-4o-mini, InstructRec)."""


def read_ahead_for_perf(request: PrepareRequest) -> Prepared:
    """`perf_prepare` hook: what the perf users' curations and ReRank will read is read ahead, as
    bench's prepare step reads it (agents/memrec/read_ahead.py), so the timed pass ranks in the
    state bench's ranking does instead of embedding each memory on its first read (in a fresh
    RECGRAPH_HOME that was about 37 ms of CPU per user between calls); figures: `read_ahead`."""
    context = cast(MemRecContext, request.context)  # bench perf passes the method's context
    env = get_environment(context.dataset)
    return Prepared(context, {"read_ahead": read_ahead(env, context, list(request.users), request.scenario)})


def curation_latency_ms(
    requests: Sequence[dict[str, Any]], scenario: str, context: MemRecContext
) -> dict[str, float]:
    """Per-user wall time of candidate-aware curation (features, rules, top-k), after a warm-up."""
    env = get_environment(context.dataset)
    index = feature_index(env, context.memrec_memory)
    rules = resolve_rule_set(context, env)

    def run(request: dict[str, Any]) -> float:
        started = time.perf_counter()
        curate(
            index,
            rules,
            request["user_id"],
            request["candidates"],
            context.memrec_k,
            context.memrec_min_users,
            context.memrec_min_items,
            env.history(request["user_id"], scenario),
            reads_per_kept=context.memrec_similarity_reads or None,
            candidate_aware=context.memrec_curation == "candidates",
        )
        return 1000 * (time.perf_counter() - started)

    for request in requests[:4]:
        run(request)
    times = np.array([run(request) for request in requests])
    return {
        "curation_ms_mean": float(times.mean()),
        "curation_ms_p50": float(np.percentile(times, 50)),
        "curation_ms_p95": float(np.percentile(times, 95)),
    }


def tokens_by_agent(outputs: Sequence[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Mean input/output tokens per user of each agent over graph outputs."""
    totals: dict[str, list[float]] = {}
    for output in outputs:
        for record in output.get("usage") or []:
            row = totals.setdefault(record["agent"], [0.0, 0.0])
            row[0] += record["input_tokens"]
            row[1] += record["output_tokens"]
    users = max(1, len(outputs))
    return {agent: {"input": i / users, "output": o / users} for agent, (i, o) in totals.items()}


def stage_w_outputs(
    users: Sequence[str], scenario: str, context: MemRecContext, concurrency: int
) -> list[dict[str, Any]]:
    """Stage W on each case's warm-up interaction, proposed only (nothing is written)."""
    from graphs.memrec.write import graph

    env = get_environment(context.dataset)
    requests = [r for user in users if (r := warmup_interaction(env, user, scenario)) is not None]
    propose = replace(context, memrec_write_mode="propose")

    async def write(request: dict[str, Any]) -> dict[str, Any]:
        return await graph.ainvoke(request, context=propose)

    runner = RunnableLambda(write, name="stage_w:perf")
    return asyncio.run(runner.abatch(requests, config={"max_concurrency": concurrency}))


def memrec_extras(request: PerfRequest) -> dict[str, Any]:
    """`perf_extras` hook: curation latency and tokens per stage (the recommendation's and Stage
    W's) next to Table 8."""
    stages = tokens_by_agent(request.outputs)
    users = [r["user_id"] for r in request.requests]
    written = tokens_by_agent(stage_w_outputs(users, request.scenario, request.context, request.concurrency))
    # Stage W runs its own Stage R first: its synthesis is named apart from the recommendation's.
    stages.update({("stage_w_synthesise" if k == "synthesise" else k): row for k, row in written.items()})
    return {
        **curation_latency_ms(request.requests, request.scenario, request.context),
        "tokens_per_user_by_stage": {
            k: {f: round(v, 1) for f, v in row.items()} for k, row in stages.items()
        },
        "paper_table_8_tokens": PAPER_TABLE_8,
        "total_input_tokens_per_user_with_stage_w": math.fsum(row["input"] for row in stages.values()),
    }
