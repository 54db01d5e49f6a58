"""A scripted OpenAI endpoint for the fail-loudly tests: connection refusals and timeouts as the client
raises them, an OpenAI-backend context, a chat model answering by plan, and a vanilla_llm bench."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from state.context import Context

ENDPOINT = "http://llm.test/v1"
"""The scripted endpoint (nothing is sent: the models are installed in-process)."""


def refused() -> openai.APIConnectionError:
    """What the OpenAI client raises when nothing listens: a connection error caused by a refusal."""
    request = httpx.Request("POST", f"{ENDPOINT}/chat/completions")
    try:
        try:
            raise httpx.ConnectError("[Errno 111] Connection refused", request=request)
        except httpx.ConnectError as cause:
            raise openai.APIConnectionError(request=request) from cause
    except openai.APIConnectionError as error:
        return error


def timed_out() -> openai.APITimeoutError:
    """A request the server never answered in time."""
    return openai.APITimeoutError(request=httpx.Request("POST", f"{ENDPOINT}/chat/completions"))


def context(**fields: Any) -> Context:
    """An OpenAI-backend context at ENDPOINT with no backoff between retries."""
    return Context(
        **{"llm": "openai:gpt-4o-mini", "base_url": ENDPOINT, "llm_backoff": 0.0, "llm_retries": 2, **fields}
    )


class CandidateEcho(BaseChatModel):
    """Answers each request by its plan: "ok" ranks the candidates the request's JSON schema lists,
    "bad" answers prose, "refused" raises a connection error."""

    plan: list[str]
    """One entry per request, in order."""
    received: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every request."""

    @property
    def _llm_type(self) -> str:
        return "candidate-echo"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        step = self.plan.pop(0)
        if step == "refused":
            raise refused()
        if step == "bad":
            text = "I would rank the first one first."
        else:
            schema = kwargs["extra_body"]["response_format"]["json_schema"]["schema"]
            text = json.dumps({"ranking": schema["properties"]["ranking"]["items"]["enum"], "reason": "r"})
        usage = {"input_tokens": 50, "output_tokens": 10, "total_tokens": 60}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text, usage_metadata=usage))])


def bench_args(out: Path, *extra: str, users: int = 4) -> list[str]:
    """A vanilla_llm bench on ml-100k, one user at a time, one attempt per agent."""
    return ["bench", "--methods", "vanilla_llm", "--llm", "openai:gpt-4o-mini", "--base-url", ENDPOINT,
            "--users", str(users), "--concurrency", "1", "--llm-retries", "0",
            "--out", str(out), *extra]  # fmt: skip


def metrics_of(out: Path) -> dict[str, Any]:
    """The run's metrics.json."""
    return json.loads((out / "metrics.json").read_text())
