"""Structured output that every OpenAI-compatible model accepts.

Agents ask for JSON following a schema. Three request shapes carry that schema:
- `json_schema`: `response_format: {"type": "json_schema", ...}` (OpenAI's structured outputs; vLLM,
  recent llama.cpp servers);
- `json_object`: `response_format: {"type": "json_object"}` with the schema written into the last
  user message after `SCHEMA_NOTE` (gpt-3.5-turbo-0125, ARAG's model, and many local servers refuse
  `json_schema` with HTTP 400);
- `tools`: one function whose parameters are the schema, forced with `tool_choice`; its arguments
  come back as the answer's content.

`Context.structured_output` picks one, or `auto` (the default): `json_schema` until the endpoint
(base URL and model) refuses it with an HTTP 400 that names `response_format` (or the tools), then
the next shape (`json_object`, then `tools`) for that endpoint for the rest of the process: the
refused request is sent again in the new shape at once (the agent's retries are not spent), the
switch is said once on stderr, and every later request goes out in the new shape directly. Nothing
falls back silently call after call. Whatever the shape, the agent loop parses and validates the
answer the same way (agents/base.py).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from agents.breaker import OPENAI_DEFAULT_URL

Mode = Literal["json_schema", "json_object", "tools"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "tools")
"""Request shapes, in the order `auto` tries them."""
SETTINGS = ("auto", *MODES)
"""Values of `Context.structured_output`."""
SCHEMA_NOTE = "The JSON object must follow this JSON Schema:"
"""Introduces the schema in a `json_object` request (the simulator finds the schema after it)."""

_in_use: dict[str, Mode] = {}
_lock = threading.Lock()


def endpoint_key(model: Any) -> str:
    """Which endpoint a chat model talks to: its base URL and model name."""
    base = getattr(model, "openai_api_base", None) or OPENAI_DEFAULT_URL
    return f"{base} · {getattr(model, 'model_name', '?')}"


def mode_for(endpoint: str, setting: str) -> Mode:
    """The shape to send: the setting itself, or under `auto` the endpoint's current shape."""
    if setting != "auto":
        if setting not in MODES:
            raise ValueError(f"unknown structured_output {setting!r}; use one of {', '.join(SETTINGS)}")
        return setting  # type: ignore[return-value]
    with _lock:
        return _in_use.get(endpoint, "json_schema")


def is_refusal(error: BaseException, mode: Mode) -> bool:
    """An HTTP 400 that names the feature `mode` relies on (response_format, or the tools)."""
    if getattr(error, "status_code", None) != 400:
        return False
    text = str(error).lower()
    if mode == "tools":
        return "tool" in text or "function" in text
    return "response_format" in text or mode in text


def switch_after_refusal(endpoint: str, refused: Mode, error: BaseException) -> Mode | None:
    """Under `auto`: the endpoint's next shape after `refused` was refused (None: none left). The
    first thread to see a refusal switches and says so once; the others take the switch it made."""
    later = MODES[MODES.index(refused) + 1 :]
    if not later:
        return None
    with _lock:
        current = _in_use.get(endpoint, "json_schema")
        if MODES.index(current) > MODES.index(refused):
            return current
        _in_use[endpoint] = later[0]
    reason = " ".join(str(error).split())[:200]
    print(
        f"recgraph: warning: {endpoint} refused structured output as {refused} ({reason}); "
        f"sending {later[0]} to it for the rest of the run",
        file=sys.stderr,
        flush=True,
    )
    return later[0]


def forget_switches() -> None:
    """Forget every endpoint's switch (tests; a new run in the same process starts at json_schema)."""
    with _lock:
        _in_use.clear()


def with_schema_note(messages: Sequence[BaseMessage], schema: dict[str, Any]) -> list[BaseMessage]:
    """The messages with the schema after `SCHEMA_NOTE` at the end of the last user message."""
    note = f"\n\n{SCHEMA_NOTE}\n{json.dumps(schema, ensure_ascii=False)}"
    *head, last = messages
    return [*head, HumanMessage(content=f"{last.content}{note}")]


def tool_answer(message: AIMessage) -> AIMessage:
    """A forced tool call's arguments as the message content (what the agent loop parses)."""
    raw = (message.additional_kwargs or {}).get("tool_calls") or []
    if raw:
        content = str((raw[0].get("function") or {}).get("arguments") or "")
    elif message.tool_calls:
        content = json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
    else:
        content = str(message.content or "")
    return message.model_copy(update={"content": content, "tool_calls": [], "invalid_tool_calls": []})


class StructuredModel:
    """A chat model asked for JSON following one schema, in the shape `mode_for` picks (module doc).
    Has the `invoke` / `ainvoke` the agent loop calls."""

    def __init__(
        self,
        model: Any,
        name: str,
        schema: dict[str, Any],
        setting: str = "auto",
        max_tokens: int | None = None,
    ) -> None:
        """`name` names the schema (and the tool); `setting` is `Context.structured_output`; `max_tokens`
        caps each answer (bound per request, so models with different caps share one client and its
        rate limiter; None: the model's own cap)."""
        self.model, self.name, self.schema, self.setting = model, name, schema, setting
        self.cap: dict[str, int] = {"max_tokens": max_tokens} if max_tokens is not None else {}
        self.endpoint = endpoint_key(model)

    def request(self, mode: Mode, messages: Sequence[BaseMessage]) -> tuple[Any, list[BaseMessage]]:
        """The bound model (output cap included) and the messages for one request in `mode`."""
        if mode == "json_schema":
            response_format = {
                "type": "json_schema",
                "json_schema": {"name": self.name, "schema": self.schema, "strict": False},
            }
            # Through `extra_body`: the same wire format, without the OpenAI SDK's per-request type
            # transform and client-side parse (~5 ms of CPU per call); we validate answers ourselves.
            bound = self.model.bind(extra_body={"response_format": response_format}, **self.cap)
            return bound, list(messages)
        if mode == "json_object":
            bound = self.model.bind(extra_body={"response_format": {"type": "json_object"}}, **self.cap)
            return bound, with_schema_note(messages, self.schema)
        tool = {
            "type": "function",
            "function": {"name": self.name, "description": "Give the answer.", "parameters": self.schema},
        }
        choice = {"type": "function", "function": {"name": self.name}}
        return self.model.bind(tools=[tool], tool_choice=choice, **self.cap), list(messages)

    def _next(self, mode: Mode, error: BaseException) -> Mode:
        """The shape to try after `error`, or `error` raised again when it is not a refusal to switch on."""
        if self.setting == "auto" and is_refusal(error, mode):
            following = switch_after_refusal(self.endpoint, mode, error)
            if following is not None:
                return following
        raise error

    def invoke(self, messages: Sequence[BaseMessage], config: Any = None, **kwargs: Any) -> AIMessage:
        """One answer (synchronously)."""
        mode = mode_for(self.endpoint, self.setting)
        while True:
            bound, sent = self.request(mode, messages)
            try:
                answer = bound.invoke(sent, config=config, **kwargs)
            except Exception as error:  # a refusal switches the shape; anything else is raised
                mode = self._next(mode, error)
                continue
            return tool_answer(answer) if mode == "tools" else answer

    async def ainvoke(self, messages: Sequence[BaseMessage], config: Any = None, **kwargs: Any) -> AIMessage:
        """One answer (on the event loop)."""
        mode = mode_for(self.endpoint, self.setting)
        while True:
            bound, sent = self.request(mode, messages)
            try:
                answer = await bound.ainvoke(sent, config=config, **kwargs)
            except Exception as error:  # a refusal switches the shape; anything else is raised
                mode = self._next(mode, error)
                continue
            return tool_answer(answer) if mode == "tools" else answer
