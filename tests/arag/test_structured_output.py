"""ARAG through a simulated model that refuses `response_format: json_schema` with HTTP 400, as
gpt-3.5-turbo-0125 (the paper's model) and many local servers do: the run must switch once and then
get every answer from the model, never from a fallback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from agents.structured_output import SCHEMA_NOTE, forget_switches, is_refusal, tool_answer
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from graphs.arag.graph import graph
from llmsim import reading as sim_reading
from llmsim.process import SimServer
from state.arag.context import AragContext
from world.environment import get_environment


@pytest.fixture()
def refusing() -> Iterator[SimServer]:
    """A simulator that answers every json_schema request with HTTP 400."""
    forget_switches()
    with SimServer(seed=1, refuse="json_schema") as server:
        yield server
    forget_switches()


def cases(users: int) -> list[Any]:
    return plan_cases(get_environment("ml-100k"), Protocol(dataset="ml-100k", users=users, candidates=10))


def test_the_refusing_mode_answers_json_schema_with_the_400_such_models_send(refusing: SimServer) -> None:
    """The plain OpenAI client gets a BadRequestError naming response_format; json_object goes through."""
    import openai

    client = openai.OpenAI(base_url=refusing.base_url, api_key="sim")
    schema = {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}
    with pytest.raises(openai.BadRequestError) as raised:
        client.chat.completions.create(
            model="sim-model",
            messages=[{"role": "user", "content": "hi"}],
            extra_body={
                "response_format": {"type": "json_schema", "json_schema": {"name": "S", "schema": schema}}
            },
        )
    assert raised.value.status_code == 400 and "response_format" in str(raised.value)
    assert is_refusal(raised.value, "json_schema")
    text = f"Summarise.\n\n{SCHEMA_NOTE}\n{json.dumps(schema)}"
    answer = client.chat.completions.create(
        model="sim-model",
        messages=[{"role": "user", "content": text}],
        response_format={"type": "json_object"},
    )
    assert set(json.loads(answer.choices[0].message.content)) == {"summary"}  # the prompt's schema
    assert refusing.stats()["refused"] == 1


def test_without_a_switch_arag_falls_back_on_a_refusing_model(refusing: SimServer) -> None:
    """The old behaviour, still there when the shape is pinned to json_schema: every agent falls back."""
    context = AragContext(
        llm="sim", base_url=refusing.base_url, llm_backoff=0.0, llm_retries=0, structured_output="json_schema"
    )
    output = graph.invoke(cases(1)[0].request("classic"), context=context)
    assert {u["source"] for u in output["usage"]} == {"fallback"}


def test_auto_switches_once_and_arag_runs_with_no_fallback(refusing: SimServer, capfd: Any) -> None:
    """auto: the first refusal switches the endpoint to json_object (said once on stderr); every
    agent of every user answers from the model. Only the first user's first superstep (user
    understanding and NLI, sent side by side) can meet a refusal; later users meet none."""
    context = AragContext(llm="sim", base_url=refusing.base_url, llm_backoff=0.0, llm_retries=0)
    first, *others = cases(3)
    output = graph.invoke(first.request("classic"), context=context)
    assert {u["source"] for u in output["usage"]} == {"llm"}
    refused = refusing.stats()["refused"]
    assert 1 <= refused <= 2
    for case in others:
        output = graph.invoke(case.request("classic"), context=context)
        assert sorted(output["ranking"]) == sorted(case.candidates)
        assert {u["source"] for u in output["usage"]} == {"llm"}
    assert refusing.stats()["refused"] == refused
    said = [line for line in capfd.readouterr().err.splitlines() if "refused structured output" in line]
    assert len(said) == 1 and "json_object" in said[0]


@pytest.mark.parametrize("shape", ["json_object", "tools"])
def test_a_pinned_shape_never_sends_json_schema(refusing: SimServer, shape: str) -> None:
    """The knob: json_object or tools from the first request on, no refusal, answers from the model."""
    context = AragContext(
        llm="sim", base_url=refusing.base_url, llm_backoff=0.0, llm_retries=0, structured_output=shape
    )
    output = graph.invoke(cases(1)[0].request("classic"), context=context)
    assert {u["source"] for u in output["usage"]} == {"llm"}
    assert refusing.stats()["refused"] == 0


def test_a_tool_call_becomes_the_answer_content() -> None:
    """The forced tool call's raw arguments are the content the agent loop parses."""
    call = {"id": "c1", "type": "function", "function": {"name": "S", "arguments": '{"summary": "x"}'}}
    message = AIMessage(
        content="",
        additional_kwargs={"tool_calls": [call]},
        tool_calls=[{"id": "c1", "name": "S", "args": {"summary": "x"}}],
    )
    assert tool_answer(message).content == '{"summary": "x"}'


def test_other_400s_are_not_refusals() -> None:
    """Only a 400 that names the shape's feature switches; a 400 about something else is raised."""

    class Fake(Exception):
        status_code = 400

    assert not is_refusal(Fake("context length exceeded"), "json_schema")
    assert is_refusal(Fake("Invalid parameter: 'response_format' of type 'json_schema'"), "json_schema")
    assert not is_refusal(Fake("'response_format' of type 'json_schema'"), "tools")


def test_the_simulator_and_the_client_agree_on_the_schema_note() -> None:
    """The simulator finds the schema where the client writes it."""
    assert sim_reading.SCHEMA_NOTE == SCHEMA_NOTE
    messages = [
        {"role": "user", "content": HumanMessage(content=f'x\n\n{SCHEMA_NOTE}\n{{"type": "object"}}').content}
    ]
    assert sim_reading.schema_in_prompt(messages) == {"type": "object"}
