"""AMEM4Rec's training driver: every planned window through the `amem4rec_train` graph, with
bounded concurrency, deterministically, resumably.

Determinism — rounds against a snapshot: the plan (users in id order, each user's windows oldest
first) is cut into rounds of `amem4rec_round_windows` consecutive windows (by plan position). Within a
round every window is run through the graph in "propose" mode concurrently (up to `concurrency`
in flight), all against the pool as it stood when the round began; each proposal is logged
durably in the pool. Then the round's plans are applied in window order; two rewrites of one memory
in a round meet the pool's compare-and-set and are merged, never lost. What a round reads depends
only on the plan and the round size — never on `concurrency` or timing — so, with a deterministic
model, any concurrency gives the same pool; `amem4rec_round_windows=1` is Algorithm 1's strict order.

Resume: applied windows are in the pool's ledger and skipped; a round killed while proposing is
proposed again against the same snapshot (its logged proposals are reused, no call is repeated);
a round killed while applying has every proposal logged and is finished without a call. The same
settings therefore give the same final pool whether or not the run was interrupted.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from langchain_core.runnables import RunnableConfig

from agents.amem4rec.policy import OUTCOMES
from agents.amem4rec.retrieval import training_pool
from agents.amem4rec.windows import WindowRef, plan_windows, window_items
from agents.usage import summarise_usage
from graphs.amem4rec.extraction import extract_windows
from graphs.concurrency import run_concurrently
from state.amem4rec.context import Amem4RecContext
from state.context import backend_for
from tools.amem4rec.extraction_stage import ExtractionStage, attach
from tools.amem4rec.pool import MemoryPool
from world.environment import Environment

Progress = Callable[[int, int], None]
"""Called as (windows in the pool, windows planned) after each applied window."""
WindowTrace = Callable[[WindowRef], RunnableConfig]
"""The invoke config of one training window's run (its tags and metadata; graphs/tracing.py)."""
AGENT_FIELDS = ("llm_calls", "input_tokens", "output_tokens", "fallbacks", "repairs")


@dataclass
class TrainingRun:
    """One call of `train_pool`: the pool, the plan and what this process did."""

    pool: MemoryPool
    """The trained pool."""
    plan: list[WindowRef]
    """Every planned window, in processing order."""
    applied_before: int = 0
    """Planned windows that were already in the pool when the run started."""
    applied_now: int = 0
    """Windows this run applied."""
    usage: list[dict[str, Any]] = field(default_factory=list)
    """Usage records of the calls this process made."""
    window_calls: dict[str, int] = field(default_factory=dict)
    """LLM calls this process made per window (they run one after another: its critical path)."""
    rounds: list[list[str]] = field(default_factory=list)
    """Window keys of each round this process proposed."""
    seconds: float = 0.0
    """Wall time of the run."""


async def propose(
    refs: Sequence[WindowRef],
    context: Amem4RecContext,
    pool: MemoryPool,
    concurrency: int,
    run: TrainingRun,
    trace: WindowTrace | None = None,
) -> None:
    """Run the graph in propose mode for `refs` (concurrently) and log each plan in the pool; each
    window is one root run, configured by `trace(ref)` (tags and metadata linking it to the method)."""
    from graphs.registry import service_graph

    graph = service_graph("amem4rec_train")

    async def invoke(ref: WindowRef) -> dict[str, Any]:
        config = trace(ref) if trace else None
        request = {"user_id": ref.user_id, "start": ref.start}
        return await graph.ainvoke(request, config=config, context=context)

    def record(output: dict[str, Any]) -> None:
        plan = output["plan"]
        pool.log_proposal(plan)
        made = [r for r in output.get("usage", []) if not r.get("shared")]  # shared: counted by the stage
        run.usage.extend(made)
        run.window_calls[plan["window_key"]] = sum(r["calls"] for r in made)

    await run_concurrently(list(refs), invoke, record, concurrency)


async def _train(
    run: TrainingRun,
    context: Amem4RecContext,
    concurrency: int,
    on_progress: Progress | None,
    trace: WindowTrace | None = None,
) -> None:
    pool, size = run.pool, max(1, context.amem4rec_round_windows)
    applied = pool.applied_windows()
    rounds: dict[int, list[WindowRef]] = {}
    for position, ref in enumerate(run.plan):
        if ref.key not in applied:
            rounds.setdefault(position // size, []).append(ref)
    propose_context = replace(context, amem4rec_commit_mode="propose", amem4rec_pool=pool.location)
    done = run.applied_before

    def applied(outcome: dict[str, Any]) -> None:
        nonlocal done
        run.applied_now += outcome["status"] == "applied"
        done += 1
        if on_progress:
            on_progress(done, len(run.plan))

    for _, refs in sorted(rounds.items()):
        logged = pool.proposals()
        missing = [ref for ref in refs if ref.key not in logged]
        if missing:
            run.rounds.append([ref.key for ref in missing])
            await propose(missing, propose_context, pool, concurrency, run, trace)
            logged = pool.proposals()
        # Window order, whatever order the proposals finished in; one index write per round.
        pool.apply_all([logged[ref.key] for ref in refs], applied)


def prefetch_item_vectors(env: Environment, refs: Sequence[WindowRef], w: int) -> None:
    """Embed up front, in a few large batches, the item vectors the fallback extractor will read
    (a window without categories is described by how related its items' texts are:
    agents/amem4rec/patterns.py) instead of three rows at a time per window."""
    rows: set[int] = set()
    for ref in refs:
        items = window_items(env, ref.user_id, ref.start, w)
        if not any(env.dataset.items[i].categories for i in items):
            rows.update(env.item_index[i] for i in items)
    env.item_vectors().ensure(np.array(sorted(rows), dtype=np.int64))


def train_pool(
    env: Environment,
    context: Amem4RecContext,
    users: Sequence[str],
    concurrency: int,
    on_progress: Progress | None = None,
    trace: WindowTrace | None = None,
    stage: ExtractionStage | None = None,
) -> TrainingRun:
    """Train (or finish training) the context's pool on `users`' windows; see the module docstring.
    `trace(window)` configures each window's run for tracing (None: no tags or metadata). With a
    `stage`, the windows' extractions are first asked once into it (graphs/amem4rec/extraction.py;
    those already there, e.g. from another ablation's pool, are not asked again) and the windows'
    runs read them from it."""
    started = time.perf_counter()
    pool = training_pool(context, env)
    plan = plan_windows(env, users, context.amem4rec_window, context.amem4rec_windows_per_user)
    applied = pool.applied_windows()
    run = TrainingRun(pool, plan, applied_before=sum(ref.key in applied for ref in plan))
    if on_progress:
        on_progress(run.applied_before, len(plan))
    todo = [ref for ref in plan if ref.key not in applied]
    if backend_for(context, "mem") == "heuristic":
        prefetch_item_vectors(env, todo, context.amem4rec_window)
    if stage is not None:
        run.usage.extend(extract_windows(env, context, todo, stage, concurrency, trace))
    attach(pool.location, stage)
    try:
        asyncio.run(_train(run, context, concurrency, on_progress, trace))
    finally:
        attach(pool.location, None)
    run.seconds = time.perf_counter() - started
    return run


def _agents(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_agent.setdefault(row["agent"], []).append(row)
    table = {}
    for agent, records in by_agent.items():
        totals = summarise_usage(records)
        table[agent] = {k: totals[k] for k in AGENT_FIELDS}
        table[agent]["invocations"] = len(records)
    return table


def training_summary(run: TrainingRun) -> dict[str, Any]:
    """Pool statistics and the training's cost: over every planned window in the pool (`windows`,
    calls, tokens, per agent; `actions`: windows per Eq. 7 strategy, and `skipped` ones whose
    extraction call failed and stored nothing; `stored_separately`: UPDATE-only windows whose linker
    chose to store separately; `evolved_share_of_linked`: evolutions over linked memories, which the
    evolution prompt aims at 0.5-0.8) and over what this process did (`this_run`)."""
    keys = {ref.key for ref in run.plan}
    ledger = [row for row in run.pool.ledger() if row["window_key"] in keys]
    rows = [usage for row in ledger for usage in row["usage"]]
    totals = summarise_usage(rows)
    windows = len(ledger)
    actions = Counter(row["action"] for row in ledger)
    linked = sum(len(row["linked"]) for row in ledger)
    evolutions = sum(len(row["evolved"]) for row in ledger)
    current = summarise_usage(run.usage)
    summary = {
        "windows": windows,
        "windows_planned": len(run.plan),
        "users": len({ref.user_id for ref in run.plan}),
        **{k: totals[k] for k in AGENT_FIELDS},
        "llm_calls_per_window": totals["llm_calls"] / windows if windows else 0.0,
        "agent_calls_per_window": sum(1 for r in rows if r["calls"]) / windows if windows else 0.0,
        "actions": {action: actions.get(action, 0) for action in OUTCOMES},
        "stored": sum(1 for row in ledger if row["stored"]),
        "stored_separately": sum(1 for row in ledger if row["stored"] and row["action"] == "update_only"),
        "linked": linked,
        "evolutions": evolutions,
        "evolved_share_of_linked": evolutions / linked if linked else 0.0,
        "merged_evolutions": sum(len(row["merged"]) for row in ledger),
        "agents": _agents(rows),
        "pool_size": run.pool.size(),
        "evolution_histogram": {str(k): v for k, v in run.pool.evolution_histogram().items()},
        "fingerprint": run.pool.fingerprint(),
        "pool": run.pool.location,
        "this_run": {
            "windows": run.applied_now,
            **{k: current[k] for k in (*AGENT_FIELDS, "errors", "repair_kinds")},
            "seconds": run.seconds,
            "windows_per_s": run.applied_now / run.seconds if run.seconds > 0 else 0.0,
        },
    }
    return summary
