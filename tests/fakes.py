"""Fake chat models for agent tests: `ScriptedChatModel` answers (or raises) in order,
`SchemaRoutedModel` answers by the requested schema's name; both record the prompts."""

from __future__ import annotations

from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

M = TypeVar("M", bound=BaseChatModel)


class ScriptedChatModel(BaseChatModel):
    """Returns the scripted answers one by one; an Exception in the script is raised instead."""

    script: list[Any]
    """Answers: a str (content), an AIMessage, or an Exception to raise."""
    received: list[list[BaseMessage]] = Field(default_factory=list)
    """The messages of every call, in order."""
    kwargs_seen: list[dict[str, Any]] = Field(default_factory=list)
    """Keyword arguments of every call (e.g. the bound response format)."""

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        self.kwargs_seen.append(kwargs)
        answer = self.script.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, str):
            answer = AIMessage(
                content=answer,
                usage_metadata={"input_tokens": 100, "output_tokens": 20, "total_tokens": 120},
            )
        return ChatResult(generations=[ChatGeneration(message=answer)])


class SchemaRoutedModel(BaseChatModel):
    """Answers by the requested schema's name, so concurrent agents may call in any order."""

    answers: dict[str, Any]
    """Schema name -> answer text, or a function of the prompt messages returning it."""
    calls: list[tuple[str, list[BaseMessage]]] = Field(default_factory=list)
    """(schema name, messages) of every call."""

    @property
    def _llm_type(self) -> str:
        return "schema-routed"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        name = kwargs["extra_body"]["response_format"]["json_schema"]["name"]
        self.calls.append((name, list(messages)))
        answer = self.answers[name]
        content = answer(messages) if callable(answer) else answer
        message = AIMessage(
            content=content, usage_metadata={"input_tokens": 50, "output_tokens": 10, "total_tokens": 60}
        )
        return ChatResult(generations=[ChatGeneration(message=message)])

    def prompts_for(self, name: str) -> list[str]:
        return [str(messages[-1].content) for schema, messages in self.calls if schema == name]


def install(monkeypatch: Any, model: M) -> M:
    """Make every agent use `model` whatever backend the context names."""
    import agents.backends

    monkeypatch.setattr(agents.backends, "chat_model_here", lambda *settings: model)
    return model
