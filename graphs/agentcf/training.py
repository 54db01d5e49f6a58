"""AgentCF's training driver: every planned interaction through the `agentcf_train` graph, step by
step, deterministically, resumably.

A step (agents/agentcf/plan.py) holds one interaction of each trained user. Its interactions run
concurrently (at most `concurrency` in flight), all from the memories as they stood when the step
began; their proposals are then committed in user order: each user's memory and log, and every item
memory a reflection changed. An item two users of one step both reflected on keeps the later user's
description, as the authors' batched code does. What a step reads depends only on the plan, so any
concurrency gives the same memories.

Checkpoint: after every step the memories are written whole to
`$RECGRAPH_HOME/<dataset>/agentcf/memories-<key>.json` (tools/agentcf/store.py), the key a digest of
the training knobs, the seed, the plan (users, positions, items, negatives: the split) and the
models of the two roles. A rerun of the same configuration starts after the last saved step: a run
killed mid-step redoes that step from the same memories, so it ends with the memories an
uninterrupted run has.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig

from agents.agentcf.plan import Interaction, plan_steps
from agents.agentcf.recall import item_memories, user_memory
from agents.usage import summarise_usage
from graphs.concurrency import run_concurrently
from state.agentcf.context import TRAINING_FIELDS, AgentCFContext
from state.context import backend_for
from tools.agentcf.store import Memories, forget, load, save
from world.environment import Environment
from world.paths import dataset_cache

Progress = Callable[[int, int], None]
"""Called as (interactions committed, interactions planned) after each step."""
InteractionTrace = Callable[[Interaction], RunnableConfig]
"""The invoke config of one interaction's run (tags and metadata; graphs/tracing.py)."""
USAGE_FIELDS = ("llm_calls", "input_tokens", "output_tokens", "fallbacks", "repairs")


@dataclass
class TrainingRun:
    """One call of `train_memories`: the memories, the plan and what this process did."""

    memories: Memories
    """The trained memories."""
    path: Path
    """Their checkpoint file."""
    plan: list[list[Interaction]]
    """Every planned step."""
    steps_before: int = 0
    """Steps already in the checkpoint when the run started."""
    usage: list[dict[str, Any]] = field(default_factory=list)
    """Usage records of the calls this process made."""
    seconds: float = 0.0
    """Wall time of the run."""


def memory_key(ctx: AgentCFContext, plan: Sequence[Sequence[Interaction]]) -> str:
    """What trained memories are keyed by (module docstring), as a short digest."""
    settings = {
        "knobs": {name: getattr(ctx, name) for name in TRAINING_FIELDS},
        "seed": ctx.seed,
        "plan": [[[i.user_id, i.position, i.positive, i.negative, i.positive_first] for i in s]
                 for s in plan],
        "rec": backend_for(ctx, "rec"),
        "mem": backend_for(ctx, "mem"),
    }
    return hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def memory_path(env: Environment, key: str) -> Path:
    """The checkpoint file of memories trained under `key` on the environment's dataset."""
    return dataset_cache(env.dataset) / "agentcf" / f"memories-{key}.json"


def request_for(env: Environment, memories: Memories, step: Interaction) -> dict[str, Any]:
    """The graph input of one interaction: its position and the memories it starts from."""
    return {
        "user_id": step.user_id,
        "position": step.position,
        "user_memory": user_memory(memories, step.user_id),
        "item_memories": item_memories(env, memories, [step.positive, step.negative]),
    }


def commit(
    env: Environment, memories: Memories, step: Sequence[Interaction], outputs: dict[str, dict[str, Any]]
) -> list[dict[str, Any]]:
    """Apply one step's proposals in user order (module docstring); returns their usage records."""
    before = {i.user_id: request_for(env, memories, i)["item_memories"] for i in step}
    records: list[dict[str, Any]] = []
    counts = Counter(memories.outcomes)
    for interaction in step:
        out = outputs[interaction.user_id]
        memories.users[interaction.user_id] = out["user_memory_after"]
        memories.user_log.setdefault(interaction.user_id, []).append(out["user_memory_after"])
        for item, text in out["item_memories_after"].items():
            if text != before[interaction.user_id][item]:
                memories.items[item] = text
        choices = out.get("choices") or []
        counts.update(
            interactions=1,
            first_right=int(bool(choices) and choices[0]["correct"]),
            finally_right=int(bool(choices) and choices[-1]["correct"]),
            rounds=len(choices),
            reflections=sum(1 for c in choices if c["reflect"]),
        )
        records.extend(out.get("usage", []))
    memories.outcomes = dict(counts)
    memories.usage.extend(records)
    return records


def remaining_steps(run: TrainingRun) -> Iterator[tuple[int, list[Interaction]]]:
    """The plan's steps after those the checkpoint holds, each with its index."""
    for index in range(run.memories.steps_done, len(run.plan)):
        yield index, run.plan[index]


def end_step(
    env: Environment, run: TrainingRun, index: int, outputs: dict[str, dict[str, Any]],
    saved: Callable[[Memories], object], on_progress: Progress | None,
) -> None:
    """After step `index` ran (in-process or on a deployment): its proposals committed in user order,
    the memories saved by `saved` (the checkpoint), the progress reported."""
    run.usage.extend(commit(env, run.memories, run.plan[index], outputs))
    run.memories.steps_done = index + 1
    saved(run.memories)
    report_progress(run, on_progress)  # fmt: skip


def report_progress(run: TrainingRun, on_progress: Progress | None) -> None:
    """`on_progress(interactions committed, interactions planned)`, if given."""
    if on_progress:
        on_progress(sum(len(s) for s in run.plan[: run.memories.steps_done]), sum(len(s) for s in run.plan))


async def run_step(
    graph: Any, requests: dict[str, dict[str, Any]], step: Sequence[Interaction], ctx: AgentCFContext,
    concurrency: int, trace: InteractionTrace | None,
) -> dict[str, dict[str, Any]]:
    """One step's interactions through the graph, concurrently: user id -> the graph's output."""
    outputs: dict[str, dict[str, Any]] = {}

    async def invoke(item: Interaction) -> tuple[str, dict[str, Any]]:
        config = trace(item) if trace else None
        return item.user_id, await graph.ainvoke(requests[item.user_id], config=config, context=ctx)

    def record(pair: tuple[str, dict[str, Any]]) -> None:
        outputs[pair[0]] = pair[1]

    await run_concurrently(step, invoke, record, concurrency)
    return outputs  # fmt: skip


async def _train(
    env: Environment, run: TrainingRun, ctx: AgentCFContext, concurrency: int,
    on_progress: Progress | None, trace: InteractionTrace | None,
) -> None:
    from graphs.registry import service_graph

    graph = service_graph("agentcf_train")
    for index, step in remaining_steps(run):
        requests = {i.user_id: request_for(env, run.memories, i) for i in step}
        outputs = await run_step(graph, requests, step, ctx, concurrency, trace)
        end_step(env, run, index, outputs, lambda memories: save(run.path, memories), on_progress)


def train_memories(
    env: Environment, ctx: AgentCFContext, users: Sequence[str], concurrency: int,
    on_progress: Progress | None = None, trace: InteractionTrace | None = None,
) -> TrainingRun:
    """Train (or finish training) the memories of `users`' agents; see the module docstring."""
    started = time.perf_counter()
    plan = plan_steps(env, users, ctx)
    key = memory_key(ctx, plan)
    path = memory_path(env, key)
    memories = load(path)
    memories.key = key
    run = TrainingRun(memories, path, plan, steps_before=memories.steps_done)
    report_progress(run, on_progress)
    if memories.steps_done < len(plan):
        asyncio.run(_train(env, run, ctx, concurrency, on_progress, trace))
    elif not path.is_file():
        save(path, memories)  # nothing to train (no user with a training interaction): an empty file
    forget(str(path))
    run.seconds = time.perf_counter() - started
    return run  # fmt: skip


def training_summary(run: TrainingRun) -> dict[str, Any]:
    """The memories' statistics and the training's cost, overall and for this process (`this_run`)."""
    totals = summarise_usage(run.memories.usage)
    current = summarise_usage(run.usage)
    interactions = sum(len(s) for s in run.plan)
    outcomes = run.memories.outcomes
    done = outcomes.get("interactions", 0)
    return {
        "memories": str(run.path),
        "fingerprint": run.memories.fingerprint(),
        "steps": len(run.plan),
        "interactions": interactions,
        "users": len(run.memories.users),
        "items_updated": len(run.memories.items),
        "first_choice_accuracy": outcomes.get("first_right", 0) / done if done else 0.0,
        "final_choice_accuracy": outcomes.get("finally_right", 0) / done if done else 0.0,
        "rounds": outcomes.get("rounds", 0),
        "reflections": outcomes.get("reflections", 0),
        **{k: totals[k] for k in USAGE_FIELDS},
        "reused": run.steps_before == len(run.plan),
        "this_run": {
            "steps": len(run.plan) - run.steps_before,
            **{k: current[k] for k in (*USAGE_FIELDS, "errors", "repair_kinds")},
            "seconds": run.seconds,
        },
    }
