"""Retry conversations render through chat templates that require alternating user/assistant turns.

Llama-2- and Mistral-style templates raise when two user (or two assistant) messages follow each
other, or when the first turn after the system message is the assistant's. `STRICT_TEMPLATE` is
such a template (written here in the same Jinja dialect Hugging Face tokenizers use); every message
list the agent loop sends, first attempts and every kind of retry, must render through it.
"""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    convert_to_openai_messages,
)

from agents.base import AgentTask, retry_messages, run_agent
from agents.ranking import repair_ranking
from state.context import Context
from state.schemas import RankedList
from tests.fakes import ScriptedChatModel, install

STRICT_TEMPLATE = """
{%- if messages[0]['role'] == 'system' -%}
  {%- set system = messages[0]['content'] -%}{%- set turns = messages[1:] -%}
{%- else -%}
  {%- set system = '' -%}{%- set turns = messages -%}
{%- endif -%}
{%- if not turns or turns[-1]['role'] != 'user' -%}
  {{ raise_exception('the last turn must be the user') }}
{%- endif -%}
{%- for message in turns -%}
  {%- if message['role'] not in ['user', 'assistant'] -%}
    {{ raise_exception('unexpected role ' ~ message['role']) }}
  {%- endif -%}
  {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
    {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
  {%- endif -%}
  {%- if message['role'] == 'user' -%}
    {{ '<s>[INST] ' }}
    {%- if loop.first and system -%}{{ '<<SYS>>\\n' ~ system ~ '\\n<</SYS>>\\n\\n' }}{%- endif -%}
    {{ message['content'] ~ ' [/INST]' }}
  {%- else -%}
    {{ ' ' ~ message['content'] ~ ' </s>' }}
  {%- endif -%}
{%- endfor -%}
"""


def render(messages: list[BaseMessage]) -> str:
    """The conversation through the strict template (TemplateError when the roles do not alternate)."""

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    environment.globals["raise_exception"] = raise_exception
    return environment.from_string(STRICT_TEMPLATE).render(messages=convert_to_openai_messages(messages))


CANDIDATES = ["a", "b", "c", "d"]
LINES = "\n".join(f'[{i}] "Title {i}"' for i in CANDIDATES)
PROMPT = [SystemMessage(content="rank"), HumanMessage(content=f"Candidates:\n{LINES}")]


def test_the_strict_template_rejects_what_it_should() -> None:
    render(PROMPT)
    with pytest.raises(TemplateError, match="alternate"):
        render([PROMPT[0], AIMessage(content="{}"), PROMPT[1]])  # the assistant speaks first
    with pytest.raises(TemplateError, match="alternate"):
        render([*PROMPT, HumanMessage(content="again")])  # two user turns in a row
    with pytest.raises(TemplateError, match="last turn"):
        render([*PROMPT, AIMessage(content="{}")])


def test_retry_shapes_alternate_and_keep_the_task() -> None:
    with_answer = retry_messages(PROMPT, '{"ranking": [oops', "Your previous answer was rejected: bad JSON.")
    assert [m.type for m in with_answer] == ["system", "human", "ai", "human"]
    assert with_answer[1].content == PROMPT[1].content and with_answer[2].content == '{"ranking": [oops'
    assert with_answer[3].content.startswith("Your previous answer was rejected: bad JSON.")
    without_answer = retry_messages(PROMPT, None, "Your previous answer was cut off.")
    assert [m.type for m in without_answer] == ["system", "human"]
    assert without_answer[1].content == f"Your previous answer was cut off.\n\n{PROMPT[1].content}"
    for messages in (with_answer, without_answer):
        assert render(messages).count("[/INST]") == sum(m.type == "human" for m in messages)


def _task() -> AgentTask[RankedList]:
    def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, CANDIDATES)
        return RankedList(ranking=ranking, reason=answer.reason), repairs

    return AgentTask(
        agent="ranker",
        role="rec",
        messages=PROMPT,
        schema=RankedList,
        validate=validate,
        fallback=lambda: RankedList(ranking=CANDIDATES, reason="fallback"),
    )


def _length_error() -> Exception:
    from openai.types.chat import ChatCompletion

    completion = ChatCompletion.model_validate(
        {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "m",
            "choices": [
                {"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": '{"rank'}}
            ],
        }
    )
    return openai.LengthFinishReasonError(completion=completion)


def test_every_message_list_the_loop_sends_renders(monkeypatch) -> None:
    response = httpx.Response(500, request=httpx.Request("POST", "http://llm.test/v1/chat/completions"))
    script = [
        "Sure! Here is my ranking: a, b, c, d",  # prose: rejected, shown back as the assistant's turn
        json.dumps({"ranking": "a"}),  # schema-invalid: rejected again
        _length_error(),  # truncated: no answer to show
        openai.InternalServerError("status 500", response=response, body=None),  # transport failure
        json.dumps({"ranking": ["b", "a", "d", "c"], "reason": "fits"}),
    ]
    model = install(monkeypatch, ScriptedChatModel(script=script))
    result = run_agent(_task(), Context(llm="openai:gpt-4o-mini", llm_backoff=0.0, llm_retries=4))
    assert result.output.ranking == ["b", "a", "d", "c"] and result.usage.source == "llm"
    assert len(model.received) == 5
    for messages in model.received:
        render(messages)
    rejected = model.received[1]
    assert [m.type for m in rejected] == ["system", "human", "ai", "human"]
    assert rejected[2].content == "Sure! Here is my ranking: a, b, c, d"
    assert "rejected: the answer is not valid JSON" in rejected[3].content
    assert rejected[1].content == PROMPT[1].content  # the task, candidates included, stays in the talk
