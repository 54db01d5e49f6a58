"""AMEM4Rec's extraction stage, run before a pool's rounds: every planned window's extraction
(Eq. 2) asked once and kept in a stage shared by every pool with the same extraction knobs
(`tools.amem4rec.extraction_stage`), which the training graph's extract node then reads.

Why it can be shared: a window's extraction depends on its items, `amem4rec_window`,
`amem4rec_memory_chars`, the world the windows come from and the mem backend — never on the pool
or on the knobs the ablations change (`amem4rec_evolution`, `amem4rec_semantic`,
`amem4rec_similarity`, the thresholds, `amem4rec_top_l`, `amem4rec_round_windows`): those shape
later steps only. `stage_key` is what a stage folder is keyed by; each row is keyed again by the
digest of its exact request (`agents.amem4rec.extract.extraction_request`).

Writer: `extract_windows` (the stage's only writer), under the stage's file lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agents.amem4rec.extract import extraction_request
from agents.amem4rec.windows import WindowRef, window_items, window_key
from agents.base import arun_agent
from graphs.amem4rec.train_graph import prepare_extract
from graphs.concurrency import run_concurrently
from state.amem4rec.context import Amem4RecContext
from state.context import backend_for
from tools.amem4rec.extraction_stage import ExtractionStage
from world.environment import Environment

STAGE_KNOBS = ("amem4rec_window", "amem4rec_memory_chars")
"""The pool knobs (of `state.amem4rec.context.POOL_CONFIG_FIELDS`) an extraction depends on."""


EXTRACTION_RUN = "amem4rec_extract"
"""The root run of one window's shared extraction (its tags and metadata are the window's)."""


def stage_key(context: Amem4RecContext, protocol: dict[str, Any], users: list[str]) -> dict[str, Any]:
    """What a bench run's extraction stage is keyed by: the extraction knobs, the protocol (dataset,
    scenario, seed, users, llm: the world the windows come from), the users trained on, the window
    cap and the mem backend."""
    return {
        "knobs": {name: getattr(context, name) for name in STAGE_KNOBS},
        "protocol": protocol,
        "users": users,
        "windows_per_user": context.amem4rec_windows_per_user,
        "mem": backend_for(context, "mem"),
    }


def extract_windows(
    env: Environment,
    context: Amem4RecContext,
    refs: Sequence[WindowRef],
    stage: ExtractionStage,
    concurrency: int,
    trace: Any = None,
) -> list[dict[str, Any]]:
    """Ask the extractor for every window of `refs` the stage lacks (up to `concurrency` at once)
    and store each answer; returns the usage of the calls made now. Holds the stage's lock, so a
    process building the same stage waits and then asks nothing."""
    usage: list[dict[str, Any]] = []
    with stage.building():
        stored = stage.stored()
        todo = []
        for ref in refs:
            state = {"items": window_items(env, ref.user_id, ref.start, context.amem4rec_window)}
            call = prepare_extract(state, context, env)
            request = extraction_request(call.task, context)
            if (ref.key, request) not in stored:
                todo.append((ref, call, request))

        async def ask(job: tuple[WindowRef, Any, str]) -> tuple[WindowRef, str, dict[str, Any]]:
            ref, call, request = job
            # its own root run, not a second one of the window's training
            config = {**trace(ref), "run_name": EXTRACTION_RUN} if trace else None
            result = await arun_agent(call.task, context, config)
            return ref, request, call.finish(result)

        def keep(done: tuple[WindowRef, str, dict[str, Any]]) -> None:
            ref, request, outcome = done
            stage.put(window_key(ref.user_id, ref.start), request, outcome)
            usage.extend(outcome.get("usage", []))

        if todo:
            asyncio.run(run_concurrently(todo, ask, keep, concurrency))
    return usage
