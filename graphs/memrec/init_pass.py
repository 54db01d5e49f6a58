"""Runs MemRec's optional LM_Mem initialisation pass over a memory graph (see agents/memrec/init.py).

Users run concurrently (at most `concurrency` calls in flight); each model-written memory is
applied at once (jobs touch disjoint nodes, so order does not matter); a fallback leaves the
deterministic memory in place. Users whose job is already done are skipped, so an interrupted
pass resumes where it stopped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agents.base import arun_agent
from agents.memrec.feature_index import feature_index
from agents.memrec.init import init_job, init_job_id, init_task
from agents.usage import summarise_usage
from state.memrec.context import MemRecContext
from tools.memrec.writer import MemoryWriter
from world.environment import Environment


def pending_users(writer: MemoryWriter, users: Sequence[str]) -> list[str]:
    """The users whose initialisation job is not done yet."""
    done = writer.done_jobs("init:")
    return [user for user in users if init_job_id(user) not in done]


async def _initialise(
    env: Environment, context: MemRecContext, writer: MemoryWriter, users: Sequence[str], concurrency: int
) -> list[dict[str, Any]]:
    gate = asyncio.Semaphore(max(1, concurrency))
    records: list[dict[str, Any]] = []

    async def one(user: str) -> None:
        async with gate:
            result = await arun_agent(init_task(env, user), context)
        if result.usage.source == "llm":  # a fallback is the deterministic memory already stored
            writer.submit(init_job(user, result.output))
        records.append(result.usage.as_dict())

    await asyncio.gather(*(one(user) for user in users))
    return records


def initialise_memories(
    env: Environment, context: MemRecContext, users: Sequence[str], concurrency: int = 8
) -> dict[str, Any]:
    """Write the users' initial memories with LM_Mem; returns counts and usage totals."""
    graph = feature_index(env, context.memrec_memory).graph
    writer = MemoryWriter(graph, synchronous=True)
    todo = pending_users(writer, users)
    records = asyncio.run(_initialise(env, context, writer, todo, concurrency))
    summary = summarise_usage(records)
    sources: dict[str, int] = {}
    for record in records:
        sources[record["source"]] = sources.get(record["source"], 0) + 1
    return {
        "users": len(users),
        "skipped_done": len(users) - len(todo),
        "written": sources.get("llm", 0),
        "kept": len(todo) - sources.get("llm", 0),
        "sources": sources,
        **{k: summary[k] for k in ("llm_calls", "input_tokens", "output_tokens", "repairs", "errors")},
    }
