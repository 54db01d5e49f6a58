"""Generating step-labelled CoT traces: one LLM call per training task through the shared agent loop
(`agents.base.arun_agent`: schema, validation, retries, fallback), written durably to a JSONL log as
each task finishes, so a rerun skips the users already traced.

Validation: every step needs a non-empty label; the ranking is repaired into a permutation of the
candidates (unknown and repeated ids dropped, missing ones appended in the order shown), and an answer
naming no candidate at all is rejected and retried. A task whose answers stay unusable after the
retries is logged with `source: "fallback"` (no steps, the candidates in the order shown): the miner
drops it, it is not the model's reasoning.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agents.base import AgentTask, InvalidAnswer, arun_agent
from agents.chainrec.mining.tasks import TraceTask
from agents.ranking import repair_ranking
from agents.validation import EMPTY_ANSWER, constrained_schema
from prompts.chainrec.mining import trace_messages
from state.chainrec.context import ChainRecContext
from state.chainrec.mining_schemas import LABEL_CHARS, STEP_CHARS, CotAnswer, CotStep
from world.results_log import ResultsLog

METHOD = "cot_trace"
"""The `method` of every record of a traces log (`world.results_log.ResultsLog` keys by it)."""
MIN_STEPS = 2
"""The request asks for at least this many steps."""


def trace_json_schema(candidates: Sequence[str], budget: int) -> dict[str, Any]:
    """`CotAnswer` as sent to the model: ids an enum of the candidates, each once; 2 to 2×budget
    steps (room to overshoot the budget, which the miner then drops, but bounded); short labels."""
    n = len(candidates)
    return constrained_schema(
        CotAnswer,
        {
            "ranking": {"minItems": n, "maxItems": n},
            "ranking[]": {"enum": list(candidates)},
            "steps": {"minItems": MIN_STEPS, "maxItems": 2 * budget},
            "steps[].label": {"maxLength": LABEL_CHARS},
        },
    )


def trace_agent(task: TraceTask, budget: int) -> AgentTask[CotAnswer]:
    """The agent task asking for `task`'s trace (role "rec")."""
    candidates = list(task.candidates)

    def validate(answer: CotAnswer) -> tuple[CotAnswer, list[str]]:
        steps = [
            CotStep(label=" ".join(s.label.split())[:LABEL_CHARS], text=" ".join(s.text.split())[:STEP_CHARS])
            for s in answer.steps
        ]
        if not steps or not all(step.label for step in steps):
            raise InvalidAnswer("every step needs a non-empty 'label' and there must be steps", EMPTY_ANSWER)
        ranking, repairs = repair_ranking([str(i).strip() for i in answer.ranking], candidates)
        return CotAnswer(steps=steps, ranking=ranking), repairs

    return AgentTask(
        agent="chainrec_cot_trace",
        role="rec",
        messages=trace_messages(budget, task.history, task.candidate_entries, task.missing),
        schema=CotAnswer,
        validate=validate,
        fallback=lambda: CotAnswer(steps=[], ranking=candidates),
        json_schema=trace_json_schema(candidates, budget),
    )


def trace_record(task: TraceTask, answer: CotAnswer, source: str, usage: dict[str, Any]) -> dict[str, Any]:
    """The log line of one task (what `records.parse_trace` reads, plus provenance)."""
    return {
        "method": METHOD,
        "user_id": task.user_id,
        "target": task.target,
        "candidates": list(task.candidates),
        "ranking": list(answer.ranking),
        "steps": [step.model_dump() for step in answer.steps],
        "source": "llm" if source == "llm" else "fallback",
        "missing": list(task.missing),
        "usage": usage,
    }


def open_log(path: Path, protocol: dict[str, Any]) -> ResultsLog:
    """The durable traces log at `path` (a half-written last line is dropped; a log written under
    another protocol is refused)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return ResultsLog(path, protocol)


async def generate_traces(
    tasks: Sequence[TraceTask],
    context: ChainRecContext,
    log: ResultsLog,
    budget: int,
    concurrency: int = 4,
    on_done: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Trace every task whose user the log does not hold yet (at most `concurrency` calls in flight);
    each record is appended to the log as soon as it is done. Returns the new records."""
    done = log.done(METHOD)
    pending = [task for task in tasks if task.user_id not in done]
    gate = asyncio.Semaphore(max(concurrency, 1))
    records: list[dict[str, Any]] = []

    async def one(task: TraceTask) -> None:
        async with gate:
            result = await arun_agent(trace_agent(task, budget), context)
        usage = result.usage
        record = trace_record(
            task,
            result.output,
            usage.source,
            {
                "calls": usage.calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "repairs": dict(usage.repair_kinds),
                "errors": dict(usage.errors),
            },
        )
        log.append(record)
        records.append(record)
        if on_done is not None:
            on_done(record)

    jobs = [asyncio.ensure_future(one(task)) for task in pending]
    try:
        await asyncio.gather(*jobs)
    finally:  # the first failure (e.g. an unreachable endpoint) stops the others; what finished stays
        for job in jobs:
            job.cancel()
        await asyncio.gather(*jobs, return_exceptions=True)
    return records
