"""A scripted chat model for agent tests (answers or raises, in order, and records prompts)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


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


def install(monkeypatch: Any, model: ScriptedChatModel) -> ScriptedChatModel:
    """Make every agent use `model` whatever backend the context names."""
    import agents.backends

    monkeypatch.setattr(agents.backends, "chat_model_here", lambda *settings: model)
    return model
