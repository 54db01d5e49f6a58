"""The simulated OpenAI-compatible server's answers: schema filling and candidate-id extraction as pure
functions, then real ChatOpenAI calls and the raw protocol (shape, usage, keep-alive, endpoints, 400s,
plain text, tool choice) over HTTP."""

from __future__ import annotations

import http.client
import json
import math
import random
from collections.abc import Iterator
from enum import StrEnum
from typing import Any, Literal
from urllib.parse import urlsplit

import pytest
from pydantic import BaseModel, Field

from llmsim.process import SimServer
from llmsim.schema import _VOCABULARY
from llmsim.server import FAULT_KINDS, extract_candidate_ids, fill_schema
from tests.llmsim.sim_helpers import IDS, PROMPT, SimpleRanking, chat, post


class Verdict(StrEnum):
    """A closed set of labels (becomes an enum in `$defs`)."""

    like = "like"
    dislike = "dislike"


class ScoredItem(BaseModel):
    """One candidate with a bounded score."""

    item_id: str
    score: float = Field(ge=0.0, le=1.0)
    verdict: Verdict
    reasons: list[str] = Field(min_length=2, max_length=3)


class Ranking(BaseModel):
    """What a ranking agent returns."""

    ranking: list[str]
    items: list[ScoredItem]
    confidence: int = Field(ge=1, le=5)
    temperature: float = Field(gt=0.0, lt=0.25)
    best: ScoredItem | None = None
    item_id: str
    mode: Literal["fast", "slow"]
    tags: list[str] = Field(default_factory=list, max_length=4)


@pytest.fixture(scope="module")
def server() -> Iterator[SimServer]:
    """A fault-free server shared by the module."""
    with SimServer(seed=3) as sim:
        yield sim


# --- pure functions -----------------------------------------------------------------------------------


def test_fill_schema_pydantic_model_with_defs_bounds_enums_and_ids() -> None:
    schema = Ranking.model_json_schema()
    assert "$defs" in schema
    value = fill_schema(schema, IDS, random.Random(1), "normal")
    parsed = Ranking.model_validate(value)
    assert sorted(parsed.ranking) == sorted(IDS) and parsed.ranking != IDS
    # one object per candidate, in the same (shuffled) order as the ranking
    assert [item.item_id for item in parsed.items] == parsed.ranking
    assert all(0.0 <= item.score <= 1.0 and item.verdict is Verdict.like for item in parsed.items)
    assert all(len(item.reasons) == 2 for item in parsed.items)
    assert parsed.best is not None and parsed.best.item_id == IDS[0]  # item_id outside id arrays
    assert parsed.item_id == IDS[0]
    assert 1 <= parsed.confidence <= 5 and 0.0 < parsed.temperature < 0.25
    assert parsed.mode == "fast" and len(parsed.tags) == 1
    assert list(value)[:5] == ["ranking", "items", "confidence", "temperature", "item_id"]  # required first


def test_fill_schema_without_ids_uses_min_items_and_still_validates() -> None:
    value = fill_schema(Ranking.model_json_schema(), [], random.Random(0))
    parsed = Ranking.model_validate(value)
    assert len(parsed.ranking) == 1 and len(parsed.items) == 1
    words = parsed.item_id.rstrip(".").lower().split()
    assert 6 <= len(words) <= 18 and set(words) <= set(_VOCABULARY.split())
    schema = {"type": "array", "minItems": 3, "maxItems": 5, "items": {"type": "integer", "minimum": 7}}
    assert fill_schema(schema, [], random.Random(0)) == [7, 7, 7]


def test_simulated_sentences_differ_by_request_and_leave_the_ids_alone() -> None:
    ranking = {"type": "array", "items": {"type": "string"}}
    schema = {"type": "object", "properties": {"reason": {"type": "string"}, "ranking": ranking}}
    without_text = {"type": "object", "properties": {"ranking": ranking}}
    ids = ["1", "2", "3", "4", "5"]
    answers = [fill_schema(schema, ids, random.Random(seed)) for seed in range(5)]
    assert len({a["reason"] for a in answers}) == 5  # distinct text per request
    assert fill_schema(schema, ids, random.Random(3)) == answers[3]  # and reproducible
    for seed, answer in enumerate(answers):  # the text draws nothing from the ids' generator
        assert answer["ranking"] == fill_schema(without_text, ids, random.Random(seed))["ranking"]


@pytest.mark.parametrize(
    ("schema", "check"),
    [
        ({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}, lambda v: 0 < v < 1),
        ({"type": "integer", "exclusiveMinimum": 3}, lambda v: v == 4),
        ({"type": "integer", "maximum": -10}, lambda v: v <= -10),
        ({"type": "integer", "minimum": 2, "maximum": 2}, lambda v: v == 2),
        ({"type": "number", "minimum": 5, "exclusiveMinimum": True}, lambda v: v > 5),
        ({"type": "number", "exclusiveMaximum": -3}, lambda v: v < -3),
        ({"type": "string", "minLength": 40, "maxLength": 45}, lambda v: 40 <= len(v) <= 45),
        ({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, lambda v: v is True),
        ({"const": "x"}, lambda v: v == "x"),
    ],
)
def test_fill_schema_scalars_respect_bounds(schema: dict[str, Any], check: Any) -> None:
    assert check(fill_schema(schema, [], random.Random(0)))


def test_fill_schema_modes_damage_id_arrays() -> None:
    schema = SimpleRanking.model_json_schema()
    for seed in range(20):  # the normal shuffle never returns the input order
        ranking = fill_schema(schema, IDS, random.Random(seed))["ranking"]
        assert sorted(ranking) == sorted(IDS) and ranking != IDS
    assert fill_schema(schema, IDS, random.Random(0), "echo")["ranking"] == IDS
    unknown = fill_schema(schema, IDS, random.Random(0), "unknown_ids")["ranking"]
    assert len(unknown) == len(IDS) and [i for i in unknown if i not in IDS] == ["ghost-1"]
    duplicate = fill_schema(schema, IDS, random.Random(0), "duplicate_ids")["ranking"]
    assert len(duplicate) == len(IDS) and len(set(duplicate)) == len(IDS) - 1 and set(duplicate) < set(IDS)
    named = {
        "type": "object",
        "properties": {
            "candidate_ids": {"type": "array", "items": {"type": "string"}},
            "notes": {"type": "array", "items": {"type": "string"}},
        },
    }
    value = fill_schema(named, IDS, random.Random(0))
    assert sorted(value["candidate_ids"]) == sorted(IDS) and len(value["notes"]) == 1


def test_extract_candidate_ids_header_rule() -> None:
    assert extract_candidate_ids(PROMPT) == IDS  # history lines before the header are ignored
    text = "[a] one\nsome text\n  [b] two\n[c d] not an id\n[b] again\n"
    assert extract_candidate_ids(text) == ["a", "b"]  # no header: every matching line, deduplicated
    assert extract_candidate_ids("[x] before\nCANDIDATES (3):\n[y] after\nx [z] mid-line\n") == ["y"]
    assert extract_candidate_ids("Candidates: none\n") == []


# --- real HTTP ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_chat_openai_structured_output_parses(server: SimServer, method: str) -> None:
    structured = chat(server).with_structured_output(Ranking, method=method, include_raw=True)
    out = structured.invoke(PROMPT)
    assert out["parsing_error"] is None
    parsed = out["parsed"]
    assert isinstance(parsed, Ranking)
    assert sorted(parsed.ranking) == sorted(IDS) and parsed.ranking != IDS
    assert [item.item_id for item in parsed.items] == parsed.ranking
    usage = out["raw"].usage_metadata
    assert usage["input_tokens"] > 0 and usage["output_tokens"] > 0
    finish = out["raw"].response_metadata["finish_reason"]
    assert finish == ("tool_calls" if method == "function_calling" else "stop")


def test_raw_protocol_shape_keepalive_and_endpoints(server: SimServer) -> None:
    url = urlsplit(server.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    messages = [
        {"role": "system", "content": "You rank items."},
        {"role": "user", "content": "Candidates:\n[old1] x\n[old2] y"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "Candidates:\n[n1] a\n[n2] b\n[n3] c"}]},
    ]
    schema = {
        "type": "object",
        "properties": {"ranking": {"type": "array", "items": {"type": "string"}}},
        "required": ["ranking"],
        "additionalProperties": False,
    }
    body = {
        "model": "my-model",
        "messages": messages,
        "response_format": {"type": "json_schema", "json_schema": {"name": "r", "schema": schema}},
    }
    sockets = set()
    for _ in range(3):  # one TCP connection serves several requests (keep-alive)
        conn.request("POST", "/v1/chat/completions", json.dumps(body), {"Content-Type": "application/json"})
        response = conn.getresponse()
        assert response.status == 200 and response.getheader("Content-Length")
        answer = json.loads(response.read())
        sockets.add(id(conn.sock))
    assert len(sockets) == 1
    assert answer["object"] == "chat.completion" and answer["model"] == "my-model"
    assert answer["id"].startswith("chatcmpl-")
    choice = answer["choices"][0]
    assert choice["index"] == 0 and choice["finish_reason"] == "stop"
    content = choice["message"]["content"]
    assert sorted(json.loads(content)["ranking"]) == ["n1", "n2", "n3"]  # ids from the LAST user message
    prompt_chars = sum(
        len(m["content"]) if isinstance(m["content"], str) else len(m["content"][0]["text"]) for m in messages
    )
    usage = answer["usage"]
    assert usage["prompt_tokens"] == math.ceil(prompt_chars / 4)
    assert usage["completion_tokens"] == math.ceil(len(content) / 4)
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]

    conn.request("GET", "/health")
    assert json.loads(conn.getresponse().read()) == {"ok": True}
    conn.request("GET", "/v1/models")
    assert [m["id"] for m in json.loads(conn.getresponse().read())["data"]] == ["sim-model"]
    conn.close()

    status, _, error = post(server, {"model": "m", "messages": messages, "stream": True})
    assert status == 400 and "stream" in error["error"]["message"]
    before = server.stats()
    status, _, error = post(server, {"model": "m", "messages": []})
    assert status == 400 and "messages" in error["error"]["message"]
    bad_ref = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"$ref": "#/$defs/Missing"}}}
    status, _, error = post(server, {"model": "m", "messages": messages, "response_format": bad_ref})
    assert status == 400 and "Missing" in error["error"]["message"]
    after = server.stats()
    assert after["requests"] == before["requests"] + 2 and after["served_ok"] == before["served_ok"]
    zeroed = server.reset_stats()
    empty = {"requests": 0, "served_ok": 0, "faults": dict.fromkeys(FAULT_KINDS, 0)}
    assert zeroed == server.stats() == empty


def test_plain_text_and_tool_choice(server: SimServer) -> None:
    text = chat(server).invoke(PROMPT)
    assert text.content.startswith("Simulated answer.") and all(i in text.content for i in IDS)
    tools = [
        {"type": "function", "function": {"name": name, "parameters": SimpleRanking.model_json_schema()}}
        for name in ("first", "second")
    ]
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": PROMPT}],
        "tools": tools,
        "tool_choice": {"type": "function", "function": {"name": "second"}},
    }
    status, _, answer = post(server, body)
    call = answer["choices"][0]["message"]["tool_calls"][0]
    assert status == 200 and answer["choices"][0]["finish_reason"] == "tool_calls"
    assert call["type"] == "function" and call["function"]["name"] == "second"
    assert sorted(json.loads(call["function"]["arguments"])["ranking"]) == sorted(IDS)
