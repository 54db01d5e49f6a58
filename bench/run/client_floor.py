"""The client floor of `bench perf`: a method's own LLM requests replayed by a bare `ChatOpenAI`.

During the warm-up pass `RequestRecorder` captures, per user, every chat request the method sent
(messages and `response_format`, exactly as bound by `agents.backends.bind_schema`) with the
LangGraph superstep and agent run it came from. `client_floor` then replays those requests with
nothing around them (no graph, agent loop, parsing or validation): one `ainvoke` per request on a
model built as `agents.backends.chat_model_here` builds it (same simulator, timeout, client), with
the method's dependency shape kept: an agent's attempts one after another, the agents of one
superstep together, supersteps in order; users at the same concurrency, the recorded users reused
in turn until as many users as the timed pass have run. Its users per second is the ceiling the
client stack itself allows on this machine, so a method's throughput over it is the share of that
ceiling the orchestration keeps (`efficiency_vs_client`).
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage

from graphs.concurrency import run_concurrently
from state.context import Context, backend_for


@dataclass(frozen=True)
class SentRequest:
    """One chat request as a method sent it."""

    messages: list[BaseMessage]
    """The prompt messages."""
    extra_body: dict[str, Any] | None
    """The bound `extra_body` (the `response_format` JSON schema), None when the call had none."""


class RequestRecorder(BaseCallbackHandler):
    """Callback handler collecting one user's chat requests, grouped by superstep and agent run."""

    ignore_chain = True  # only chat-model starts matter: the graph's chain events are not sent here

    def __init__(self) -> None:
        """Start with no requests."""
        self.chains: dict[tuple[int, UUID | None], list[SentRequest]] = {}
        """(superstep, agent run id) -> that agent's requests in the order sent."""

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Record the request under its superstep and the agent run that sent it."""
        step = int((metadata or {}).get("langgraph_step", 0))
        params = kwargs.get("invocation_params") or {}
        for prompt in messages:
            self.chains.setdefault((step, parent_run_id), []).append(
                SentRequest(list(prompt), params.get("extra_body"))
            )

    def plan(self) -> list[list[list[SentRequest]]]:
        """The user's requests as supersteps (in order) of parallel chains of sequential requests."""
        steps: dict[int, list[list[SentRequest]]] = {}
        for (step, _), chain in self.chains.items():
            steps.setdefault(step, []).append(chain)
        return [steps[step] for step in sorted(steps)]


UserPlan = list[list[list[SentRequest]]]
"""Supersteps, each a list of chains run together, each chain a list of requests run in order."""


def plan_depth(plan: UserPlan) -> int:
    """The longest chain of dependent requests of a plan (as `agents.usage.critical_path_depth`)."""
    return sum(max(len(chain) for chain in step) for step in plan if step)


async def _replay(
    plans: Sequence[UserPlan], users: int, context: Context, concurrency: int
) -> tuple[float, list[int]]:
    from agents.backends import chat_model_here

    model = chat_model_here(
        backend_for(context, "rec"),
        context.base_url,
        context.llm_timeout,
        context.temperature,
        context.requests_per_second,
    )
    bound = {}  # one binding per distinct response_format, made before the clock starts

    def binding(request: SentRequest) -> Any:
        key = repr(request.extra_body)
        if key not in bound:
            shape = {"extra_body": request.extra_body} if request.extra_body else {}
            bound[key] = model.bind(**shape, max_tokens=context.max_output_tokens)
        return bound[key]

    for plan in plans:
        for step in plan:
            for chain in step:
                for request in chain:
                    binding(request)
    tokens: list[int] = []

    async def chain_of(requests: list[SentRequest]) -> int:
        sent = 0
        for request in requests:
            answer = await binding(request).ainvoke(request.messages)
            sent += int((answer.usage_metadata or {}).get("input_tokens", 0))
        return sent

    async def user(index: int) -> int:
        total = 0
        for step in plans[index % len(plans)]:
            total += sum(await asyncio.gather(*(chain_of(chain) for chain in step)))
        return total

    started = time.perf_counter()
    await run_concurrently(range(users), user, tokens.append, concurrency)
    return time.perf_counter() - started, tokens


def client_floor(
    plans: Sequence[UserPlan], users: int, context: Context, concurrency: int, latency: float
) -> dict[str, Any]:
    """Replay the recorded plans for `users` users at `concurrency` (after one untimed wave that
    opens the connections); the floor's throughput, its own efficiency against C / (depth · L),
    and its calls, depth, input tokens and CPU milliseconds per user (to compare with the method's)."""
    plans = [plan for plan in plans if plan]
    if not plans:
        return {"client_floor_users_per_s": None}
    asyncio.run(_replay(plans, min(users, concurrency), context, concurrency))
    cpu = time.process_time()
    wall, tokens = asyncio.run(_replay(plans, users, context, concurrency))
    cpu = time.process_time() - cpu
    replayed = [plans[i % len(plans)] for i in range(users)]
    depth = max(plan_depth(plan) for plan in replayed)
    calls = [sum(len(chain) for step in plan for chain in step) for plan in replayed]
    ideal = concurrency / (depth * latency) if depth and latency > 0 else math.inf
    floor = users / wall
    return {
        "client_floor_users_per_s": floor,
        "client_floor_efficiency": floor / ideal if math.isfinite(ideal) else None,
        "client_floor_depth": depth,
        "client_floor_llm_calls_per_user": math.fsum(calls) / users,
        "client_floor_input_tokens_per_user": math.fsum(tokens) / users,
        "client_floor_cpu_ms_per_user": 1000 * cpu / users,
        "client_floor_sampled_users": len(plans),
    }
