"""Fake chat models for agent tests: `ScriptedChatModel` answers (or raises) in order,
`SchemaRoutedModel` answers by the requested schema's name, `PatternModel` answers AMEM4Rec's agents
by a hash of the prompt; all record the prompts."""

from __future__ import annotations

import hashlib
import json
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

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
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


PATTERN_MODEL_EXTRACTIONS = [
    ("Drawn to serious character dramas.", "Stays with dramas for several steps."),
    ("Drawn to serious character dramas.", "Stays with dramas for several steps."),
    ("Prefers fast action and science fiction.", "Moves from action to science fiction."),
    ("Enjoys light comedies and romance.", "Alternates comedy and romance."),
    ("Explores older westerns and adventures.", "Jumps between eras and genres."),
]
"""What `PatternModel` extracts, chosen by a hash of the window's prompt (repeats on purpose)."""


class PatternModel(BaseChatModel):
    """A deterministic stand-in LLM for AMEM4Rec's agents: the answer depends only on the prompt.
    Extraction picks one of `PATTERN_MODEL_EXTRACTIONS`; the linker links every offered memory; the
    evolver refines the first linked memory; the ranker returns the candidates in reverse order."""

    received: list[list[BaseMessage]] = Field(default_factory=list)
    """Every call's messages."""

    @property
    def _llm_type(self) -> str:
        return "pattern"

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self.received.append(list(messages))
        prompt = str(messages[-1].content)
        schema = kwargs["extra_body"]["response_format"]["json_schema"]["schema"]
        properties = schema["properties"]
        ids = [line[1 : line.index("]")] for line in prompt.splitlines() if line.startswith("[")]
        digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
        if "linked_thought_ids" in properties:
            answer = {"should_link": True, "linked_thought_ids": ids, "reasoning": "shared tendency"}
        elif "updates" in properties:
            first = properties["updates"]["items"]["properties"]["thought_id"]["enum"][0]
            answer = {
                "should_evolve": True,
                "updates": [
                    {
                        "thought_id": first,
                        "behavior_explanation": f"Refined tendency {digest % 97}.",
                        "pattern_description": None,
                        "reasoning": "reinforced",
                    }
                ],
            }
        elif "ranked_item_ids" in properties:
            candidates = properties["ranked_item_ids"]["items"]["enum"]
            answer = {"ranked_item_ids": list(reversed(candidates)), "reasoning": "recent first"}
        else:
            behavior, pattern = PATTERN_MODEL_EXTRACTIONS[digest % len(PATTERN_MODEL_EXTRACTIONS)]
            answer = {"behavior_explanation": behavior, "pattern_description": pattern}
        message = AIMessage(
            content=json.dumps(answer),
            usage_metadata={"input_tokens": 50, "output_tokens": 10, "total_tokens": 60},
        )
        return ChatResult(generations=[ChatGeneration(message=message)])


def install(monkeypatch: Any, model: M) -> M:
    """Make every agent use `model` whatever backend the context names."""
    import agents.backends

    monkeypatch.setattr(agents.backends, "chat_model_here", lambda *settings: model)
    return model
