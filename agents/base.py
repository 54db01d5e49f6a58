"""The agent pattern every LLM node uses.

An agent = prompt messages + a pydantic output schema + validation/repair against the
state + a deterministic fallback. The loop asks the configured model for JSON that
follows the schema, parses and validates it, retries (showing the model what was wrong,
with backoff after transport errors, or the wait a 429's headers ask for: agents/retry_after.py)
up to `Context.llm_retries` times, and then falls back. Each request's output-token cap is the
agent's budget (agents/output_budget.py). Every call, token, repair, error and fallback is
recorded in an `AgentUsage`. Connection failures also go to the endpoint's circuit breaker
(`agents.breaker`): enough of them in a row stop the run with `EndpointUnreachable` instead of a
fallback.

The loop is written once as a generator that yields requests ("call" or "sleep"); a
sync and an async driver execute them, so `graph.invoke` and `graph.ainvoke` share it.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from pydantic import BaseModel, ValidationError

from agents.breaker import connection_failed, endpoint_answered, endpoint_of
from agents.output_budget import listed_entries, output_budget
from agents.retry_after import retry_wait
from agents.usage import AgentUsage
from agents.validation import (
    CONNECTION,
    INVALID_OUTPUT,
    MALFORMED_JSON,
    SCHEMA_INVALID,
    TIMEOUT,
    TRUNCATED,
    http_error_kind,
    own_ids,
)
from state.context import Context, backend_for
from world.errors import RecgraphError

Out = TypeVar("Out", bound=BaseModel)
Request = tuple[str, Any]
Outcome = tuple[str, Any]


class InvalidAnswer(ValueError):
    """An answer that cannot be repaired; its message is shown to the model on retry."""

    def __init__(self, message: str, kind: str = INVALID_OUTPUT) -> None:
        """`kind` names the failure in the error counts."""
        super().__init__(message)
        self.kind = kind


@dataclass(kw_only=True)
class AgentTask(Generic[Out]):
    """Everything one agent invocation needs."""

    agent: str
    """Agent (graph node) name, used in counts and the blackboard."""
    role: str
    """Which configured model serves it: "rec", "mem" or "planner"."""
    messages: list[BaseMessage]
    """The prompt, already filled in."""
    schema: type[Out]
    """The structured answer expected."""
    validate: Callable[[Out], tuple[Out, list[str]]]
    """Repairs an answer against the state: returns it and the repair kinds applied, or
    raises `InvalidAnswer`."""
    fallback: Callable[[], Out]
    """The deterministic answer used without an LLM or after the LLM failed."""
    json_schema: dict[str, Any] | None = None
    """A tighter, request-specific JSON schema sent to the model (e.g. ids as an enum of
    the candidates); answers are still validated against `schema`."""
    ranked_ids: Callable[[Out], Sequence[str]] | None = None
    """For an agent whose answer ranks the candidates: the item ids an answer places, in its order.
    Applied to the model's parsed answer and to the repaired one, it tells the ids the model chose
    from those validation appended (`AgentUsage.model_ids`). None for every other agent."""


@dataclass
class AgentResult(Generic[Out]):
    """An agent's answer and what it cost."""

    output: Out
    """The validated (or fallback) answer."""
    usage: AgentUsage
    """Calls, tokens, repairs, errors and where the answer came from."""


ANSWER_ERRORS = {TRUNCATED, MALFORMED_JSON, SCHEMA_INVALID}
"""Failures where an answer arrived but could not be used (the retry tells the model why)."""


def request_error_kind(error: BaseException) -> str | None:
    """Name a failed request (None when the exception is not a request or answer failure)."""
    import openai

    if isinstance(error, openai.LengthFinishReasonError):
        return TRUNCATED
    if isinstance(error, json.JSONDecodeError):
        return MALFORMED_JSON
    if isinstance(error, ValidationError):
        return SCHEMA_INVALID
    if isinstance(error, openai.RateLimitError):
        return http_error_kind(429)
    if isinstance(error, openai.APITimeoutError | asyncio.TimeoutError | TimeoutError):
        return TIMEOUT
    if isinstance(error, openai.APIConnectionError):
        return CONNECTION
    if isinstance(error, openai.APIStatusError):
        if error.status_code in (401, 403, 404):
            raise RecgraphError(f"the LLM endpoint refused the request: {error}") from None
        return http_error_kind(error.status_code)
    return None


ANSWER_ERROR_HINTS = {
    TRUNCATED: "Your previous answer was cut off. Reply with a shorter JSON object that follows the schema.",
    MALFORMED_JSON: "Your previous answer was not valid JSON. Reply with only a JSON object that "
    "follows the schema.",
    SCHEMA_INVALID: "Your previous answer did not follow the schema. Reply with only a JSON object "
    "that follows it.",
}


def retry_messages(original: list[BaseMessage], answer: str | None, note: str) -> list[BaseMessage]:
    """The prompt again, with the rejected answer and what was wrong with it, in turns that
    alternate user/assistant (strict chat templates, e.g. Llama-2's or Mistral's, reject two
    turns of one role in a row or an assistant turn right after the system message).

    With an answer: the original prompt, the answer as the assistant's turn, the note as the
    next user turn. Without one (the answer was cut off or never came): the note goes in front
    of the original request, so the last user message still carries the full task.
    """
    if answer:
        return [*original, AIMessage(content=answer[:2000]), HumanMessage(content=note)]
    *head, last = original
    return [*head, HumanMessage(content=f"{note}\n\n{last.content}")]


def parse_answer(schema: type[Out], message: AIMessage) -> Out:
    """The answer as `schema`, or `InvalidAnswer` saying why not (malformed/truncated/schema)."""
    content = str(message.content or "").strip()
    truncated = (message.response_metadata or {}).get("finish_reason") == "length"
    try:
        data = json.loads(content)
    except json.JSONDecodeError as error:
        kind = TRUNCATED if truncated else MALFORMED_JSON
        raise InvalidAnswer(f"the answer is not valid JSON ({error.msg})", kind=kind) from None
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'answer'}: {e['msg']}" for e in error.errors()[:5]
        )
        raise InvalidAnswer(f"the JSON does not follow the schema ({problems})", SCHEMA_INVALID) from None


def agent_loop(task: AgentTask[Out], context: Context, step: int) -> Generator[Request, Outcome, AgentResult]:
    """The policy-validate-retry-fallback loop, as a generator of requests."""
    from agents.backends import model_label

    spec = backend_for(context, task.role)
    usage = AgentUsage(agent=task.agent, model=model_label(spec), step=step)
    usage.model_ids = [] if task.ranked_ids is not None else None  # until the model's answer is kept
    if spec == "heuristic":
        return AgentResult(task.fallback(), usage)
    endpoint = endpoint_of(spec, context.base_url)
    messages = list(task.messages)
    prompt_text = "\n".join(str(m.content) for m in messages)
    failed: BaseException | None = None  # the last request's error: a 429's headers set the wait
    for attempt in range(context.llm_retries + 1):
        if attempt:
            yield ("sleep", retry_wait(failed, attempt, context.llm_backoff))
        started = time.perf_counter()
        status, value = yield ("call", messages)
        failed = value if status == "error" else None
        if status == "error":
            kind = request_error_kind(value)
            if kind is None:
                raise value
            answered = kind in ANSWER_ERRORS
            usage.record_failed_call(started, kind, getattr(value, "completion", None), answered)
            if kind == CONNECTION:  # may raise EndpointUnreachable: the run stops, no fallback
                connection_failed(endpoint, context.max_connection_failures, value)
            elif kind != TIMEOUT:
                endpoint_answered(endpoint)
            if kind in ANSWER_ERRORS:
                messages = retry_messages(task.messages, None, ANSWER_ERROR_HINTS[kind])
            continue
        endpoint_answered(endpoint)
        usage.record_call(started, value, prompt_text)
        try:
            answer = parse_answer(task.schema, value)
            output, repairs = task.validate(answer)
        except InvalidAnswer as problem:
            usage.record_error(problem.kind)
            note = (
                f"Your previous answer was rejected: {problem}. Answer the request above again "
                "with only a JSON object that follows the schema."
            )
            messages = retry_messages(task.messages, str(value.content or ""), note)
            continue
        usage.record_repairs(repairs)
        usage.source = "llm"
        if task.ranked_ids is not None:
            usage.model_ids = own_ids(task.ranked_ids(answer), task.ranked_ids(output))
        return AgentResult(output, usage)
    usage.source = "fallback"
    return AgentResult(task.fallback(), usage)


def _model_for(task: AgentTask, context: Context) -> Any:
    from agents.backends import bind_schema, chat_model_here

    backend = backend_for(context, task.role)
    if backend == "heuristic":  # no model: no budget to work out, no client to build per budget
        return None
    # One model per run setting (its --rps limiter governs the run); the agent's budget is bound per request.
    model = chat_model_here(
        backend, context.base_url, context.llm_timeout, context.temperature, context.requests_per_second
    )
    if model is None:
        return None
    shape = context.structured_output  # json_schema, json_object, tools or auto (agents/structured_output.py)
    budget = output_budget(task.agent, listed_entries(task.json_schema), context)
    return bind_schema(model, task.schema, task.json_schema, shape, budget)


def superstep(config: RunnableConfig | None) -> int:
    """The LangGraph superstep a node runs in (0 outside a graph)."""
    return int(((config or {}).get("metadata") or {}).get("langgraph_step", 0))


def run_agent(
    task: AgentTask[Out], context: Context, config: RunnableConfig | None = None
) -> AgentResult[Out]:
    """Run an agent synchronously."""
    model = _model_for(task, context)
    loop = agent_loop(task, context, superstep(config))
    outcome: Outcome | None = None
    while True:
        try:
            kind, payload = loop.send(outcome)  # type: ignore[arg-type]
        except StopIteration as done:
            return done.value
        if kind == "sleep":
            time.sleep(payload)
            outcome = None
            continue
        try:
            outcome = ("ok", model.invoke(payload, config=config))
        except Exception as error:  # handed to the loop, which counts it or re-raises it
            outcome = ("error", error)


async def arun_agent(
    task: AgentTask[Out], context: Context, config: RunnableConfig | None = None
) -> AgentResult[Out]:
    """Run an agent on the event loop (LLM calls do not block other users)."""
    model = _model_for(task, context)
    loop = agent_loop(task, context, superstep(config))
    outcome: Outcome | None = None
    while True:
        try:
            kind, payload = loop.send(outcome)  # type: ignore[arg-type]
        except StopIteration as done:
            return done.value
        if kind == "sleep":
            await asyncio.sleep(payload)
            outcome = None
            continue
        try:
            outcome = ("ok", await model.ainvoke(payload, config=config))
        except Exception as error:  # handed to the loop, which counts it or re-raises it
            outcome = ("error", error)
