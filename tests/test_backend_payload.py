"""The chat model our backend builds sends exactly the request a plain `ChatOpenAI` sends (it only
skips the OpenAI SDK's transform of the messages), under the same name and LLM-cache key."""

import asyncio
import json

import httpx
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from agents.backends import bind_schema, build_chat_model, untransformed_chat_openai
from state.schemas import RankedList

ANSWER = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "{}"}}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
}
MESSAGES: list[BaseMessage] = [
    SystemMessage("You rank items."),
    HumanMessage('Items: "Heat (1995)" <i>ignore this</i>'),
    AIMessage('{"ranking": ["1"]}'),
    HumanMessage("Your previous answer was rejected: answer again."),
]


def sent_bodies(model_class: type, bind: dict) -> list[dict]:
    """The JSON bodies one async and one sync call of `model_class` put on the wire."""
    bodies: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        bodies.append(json.loads(request.content))
        return httpx.Response(200, json=ANSWER)

    transport = httpx.MockTransport(handler)
    model = model_class(
        model="m", api_key="k", base_url="http://sim/v1", max_retries=0, temperature=0.0, max_tokens=64,
        http_async_client=httpx.AsyncClient(transport=transport),
        http_client=httpx.Client(transport=transport),
    )
    bound = model.bind(**bind)
    answer = asyncio.run(bound.ainvoke(MESSAGES))
    assert answer.content == "{}" and answer.usage_metadata["input_tokens"] == 3
    bound.invoke(MESSAGES)
    return bodies


def test_requests_on_the_wire_match_a_plain_chat_openai() -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "R", "schema": {"type": "object"}}}
    for bind in ({"extra_body": {"response_format": response_format}}, {}):
        ours = sent_bodies(untransformed_chat_openai(), bind)
        plain = sent_bodies(ChatOpenAI, bind)
        assert len(ours) == 2 and ours == plain
        assert [m["role"] for m in ours[0]["messages"]] == ["system", "user", "assistant", "user"]
        assert ours[0]["messages"][1]["content"] == MESSAGES[1].content
        assert list(ours[0]) == list(plain[0])  # same keys, in the same order


def test_sdk_response_format_requests_keep_their_messages_where_the_sdk_reads_them() -> None:
    model = untransformed_chat_openai()(model="m", api_key="k", base_url="http://sim/v1")
    payload = model._get_request_payload(MESSAGES, response_format={"type": "json_object"})
    assert len(payload["messages"]) == 4 and "messages" not in (payload.get("extra_body") or {})
    payload = model._get_request_payload(MESSAGES, extra_body={"seed": 1})
    assert payload["messages"] == [] and len(payload["extra_body"]["messages"]) == 4
    assert payload["extra_body"]["seed"] == 1


def test_backend_model_keeps_chat_openai_run_name_and_cache_key() -> None:
    ours = build_chat_model("openai:gpt-4o-mini", base_url="http://sim/v1")
    plain = ChatOpenAI(model="gpt-4o-mini", base_url="http://sim/v1", api_key="not-needed", timeout=60.0,
                       max_retries=0, temperature=0.0)
    assert isinstance(ours, untransformed_chat_openai()) and ours.get_name() == "ChatOpenAI"
    assert ours._get_llm_string() == plain._get_llm_string()
    bound, _ = bind_schema(ours, RankedList).request("json_schema", MESSAGES)
    assert bound.kwargs["extra_body"]["response_format"]["json_schema"]["name"] == "RankedList"


def test_per_loop_clients_share_one_verifying_tls_context() -> None:
    import ssl

    from agents.backends import chat_model_here, tls_context

    async def client_context() -> ssl.SSLContext:
        model = chat_model_here("sim", "http://sim/v1", 6.0, 0.0, 0.0)
        return model.http_async_client._transport._pool._ssl_context

    first, second = asyncio.run(client_context()), asyncio.run(client_context())
    assert first is second is tls_context()
    assert first.verify_mode == ssl.CERT_REQUIRED and first.check_hostname
