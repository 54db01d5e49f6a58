"""The simulated model behind `bench.sim_server`: fault kinds, the fault draw, and one answer per
chat-completions request (schema-valid JSON, a tool call or plain text), with counters.

A request's answer and its fault depend only on its bytes (and, for the fault, how often those
bytes came before), never on arrival order. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import threading
import time
from collections.abc import Iterable
from typing import Any

from bench import sim_injection
from bench.sim_schema import arrange_ids, count_id_arrays, extract_candidate_ids, fill_schema

FAULT_KINDS: tuple[str, ...] = (
    "http_429",
    "http_500",
    "timeout",
    "malformed_json",
    "truncated",
    "unknown_ids",
    "duplicate_ids",
    "echo",
    "injection",
)
"""Every fault the server can inject, as named in `--faults` and in `/stats`."""
OPT_IN_FAULTS: frozenset[str] = frozenset({"injection"})
"""Faults `all` leaves out: adversarial content (see `bench.sim_injection`) must be asked for by name,
since its symptoms (unknown ids, malformed JSON) would blur the per-kind counts of the others."""
ID_FAULTS: frozenset[str] = frozenset({"unknown_ids", "duplicate_ids", "echo"})
"""Faults that need id-aware output (candidate ids in the prompt and an id array to damage)."""
MALFORMED = '{"ranking": [oops'
MODEL_ID = "sim-model"
REFUSABLE: tuple[str, ...] = ("json_schema", "json_object", "tools")
"""Request shapes the server can be told to refuse (`--refuse`), as a model without them does."""
SCHEMA_NOTE = "The JSON object must follow this JSON Schema:"
"""Where a `json_object` request writes its schema (`agents.structured_output.SCHEMA_NOTE`)."""
RETRY_HEADERS: dict[str, str] = {"retry-after": "0"}
"""The headers of an `http_429` answer unless the server is given others (`--retry-headers`, e.g.
OpenAI's `x-ratelimit-remaining-requests` / `x-ratelimit-reset-requests`: see agents/retry_after.py)."""


def parse_retry_headers(spec: str | dict[str, str] | None) -> dict[str, str]:
    """A JSON object of header names to string values (or such a dict; empty/None: `RETRY_HEADERS`);
    ValueError saying what is wrong."""
    if not spec:
        return dict(RETRY_HEADERS)
    try:
        headers = json.loads(spec) if isinstance(spec, str) else spec
    except ValueError as exc:
        raise ValueError(f"--retry-headers is not JSON: {exc}") from None
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise ValueError('--retry-headers must be a JSON object of strings, e.g. {"retry-after": "2"}')
    return {str(name): value for name, value in headers.items()}


def parse_refused(spec: str | Iterable[str]) -> tuple[str, ...]:
    """`"json_schema,tools"` (or an iterable) -> the refused shapes; ValueError naming unknown ones."""
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]
    unknown = [n for n in names if n not in REFUSABLE]
    if unknown:
        raise ValueError(
            f"unknown shape(s) to refuse: {', '.join(unknown)}; choose from {', '.join(REFUSABLE)}"
        )
    return tuple(dict.fromkeys(names))


def refusal(body: dict[str, Any], refused: tuple[str, ...]) -> dict[str, Any] | None:
    """The HTTP 400 body a model without the request's shape answers (None: the shape is served).
    Worded as OpenAI words it for gpt-3.5-turbo-0125 and `json_schema`."""
    shape = (body.get("response_format") or {}).get("type")
    if shape in refused and shape in ("json_schema", "json_object"):
        message = f"Invalid parameter: 'response_format' of type '{shape}' is not supported with this model."
        return {
            "error": {
                "message": message,
                "type": "invalid_request_error",
                "param": "response_format",
                "code": None,
            }
        }
    if "tools" in refused and body.get("tools"):
        message = "Invalid parameter: 'tools' is not supported with this model."
        return {
            "error": {"message": message, "type": "invalid_request_error", "param": "tools", "code": None}
        }
    return None


def schema_in_prompt(messages: list[Any]) -> dict[str, Any] | None:
    """The JSON schema a `json_object` request wrote after `SCHEMA_NOTE` (the last one), if any."""
    for message in reversed(messages):
        text = _text(message.get("content")) if isinstance(message, dict) else ""
        at = text.rfind(SCHEMA_NOTE)
        if at >= 0:
            try:
                found, _ = json.JSONDecoder().raw_decode(text[at + len(SCHEMA_NOTE) :].lstrip())
            except ValueError:
                return None
            return found if isinstance(found, dict) else None
    return None


def parse_fault_kinds(spec: str | Iterable[str]) -> tuple[str, ...]:
    """`"all"` or a comma-separated list (or an iterable) of names -> the enabled fault kinds.

    Raises ValueError naming the unknown kinds.
    """
    names = [n.strip() for n in (spec.split(",") if isinstance(spec, str) else spec) if n.strip()]
    if names == ["all"]:
        return tuple(k for k in FAULT_KINDS if k not in OPT_IN_FAULTS)
    unknown = [n for n in names if n not in FAULT_KINDS]
    if unknown:
        choices = ", ".join(("all", *FAULT_KINDS))
        raise ValueError(f"unknown fault kind(s): {', '.join(unknown)}; choose from {choices}")
    return tuple(dict.fromkeys(names))


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


def _text(content: Any) -> str:
    """Text of an OpenAI message content (a string or a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error payload."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class Simulator:
    """The state shared by all handler threads: configuration, fault RNG and counters."""

    def __init__(
        self,
        latency: float,
        fault_rate: float,
        faults: tuple[str, ...],
        timeout_delay: float,
        seed: int,
        refused: tuple[str, ...] = (),
        retry_headers: dict[str, str] | None = None,
    ) -> None:
        self.refused = refused
        self.retry_headers = parse_retry_headers(retry_headers)
        self.latency = latency
        self.fault_rate = fault_rate
        self.faults = faults
        self.timeout_delay = timeout_delay
        self.seed = seed
        self.seen: dict[bytes, int] = {}
        self.lock = threading.Lock()
        self.counter = 0
        self.reset()

    def reset(self) -> dict[str, Any]:
        with self.lock:
            self.requests = 0
            self.served_ok = 0
            self.fault_counts = dict.fromkeys(FAULT_KINDS, 0)
            self.refusals = 0
            self.injection_modes = dict.fromkeys(sim_injection.INJECTION_MODES, 0)
        return self.stats()

    def count_request(self) -> None:
        with self.lock:
            self.requests += 1

    def stats(self) -> dict[str, Any]:
        """`requests`: every POST /v1/chat/completions (400s included); `served_ok`: normal
        answers; `faults`: injected faults per kind (every kind listed, zero included); with refused
        shapes (`--refuse`), `refused`: the requests refused with HTTP 400 for their shape; with the
        `injection` fault enabled, `injection_modes`: its count per mode (`bench.sim_injection`)."""
        with self.lock:
            stats: dict[str, Any] = {"requests": self.requests, "served_ok": self.served_ok}
            stats["faults"] = dict(self.fault_counts)
            if self.refused:
                stats["refused"] = self.refusals
            if "injection" in self.faults:
                stats["injection_modes"] = dict(self.injection_modes)
            return stats

    def draw(self, id_aware: bool, raw: bytes) -> tuple[str | None, int]:
        """Decide a request's fault (or None), count the outcome and give it a serial number.

        The draw depends on the request's bytes and how often the same bytes came before (a retry
        draws afresh), never on arrival order: a run is faulted the same way at any concurrency,
        and a killed run resumed against a new server sees the faults an uninterrupted one saw."""
        digest = hashlib.sha256(raw).digest()
        with self.lock:
            self.counter += 1
            occurrence = self.seen[digest] = self.seen.get(digest, 0) + 1
            rng = random.Random(hashlib.sha256(b"%d\0%d\0" % (self.seed, occurrence) + digest).digest())
            fault = None
            kinds = [k for k in self.faults if id_aware or k not in ID_FAULTS]
            if kinds and rng.random() < self.fault_rate:
                fault = rng.choice(kinds)
                self.fault_counts[fault] += 1
            else:
                self.served_ok += 1
            return fault, self.counter

    def complete(self, body: dict[str, Any], raw: bytes) -> tuple[int, dict[str, Any], dict[str, str]]:
        """Answer one chat-completions request: (status, JSON body, extra headers)."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, error_body("'messages' must be a non-empty list", "invalid_request_error"), {}
        if body.get("stream"):
            message = "stream=true is not supported by the simulated server; call without streaming"
            return 400, error_body(message, "invalid_request_error"), {}
        refused = refusal(body, self.refused)
        if refused is not None:
            with self.lock:
                self.refusals += 1
            return 400, refused, {}
        # The latest user message that lists candidates: a retry's last turn may be only the note.
        users = [_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        prompt = next((text for text in reversed(users) if extract_candidate_ids(text)), "")
        ids = extract_candidate_ids(prompt)
        prompt_chars = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, dict))

        try:
            tool, schema = self._target(body, ids)
            id_arrays = count_id_arrays(schema, ids) if schema is not None else 0
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            return 400, error_body(f"cannot fill the requested schema: {exc!r}", "invalid_request_error"), {}
        id_aware = bool(ids) and (schema is None or id_arrays > 0)
        fault, serial = self.draw(id_aware, raw)
        time.sleep(self.latency)
        if fault == "http_429":
            message = "Rate limit reached for sim-model (simulated)."
            error = error_body(message, "requests", "rate_limit_exceeded")
            return 429, error, dict(self.retry_headers)
        if fault == "http_500":
            message = "The server had an error while processing your request (simulated)."
            return 500, error_body(message, "server_error"), {}
        if fault == "timeout":
            time.sleep(self.timeout_delay)

        mode = fault if fault in ID_FAULTS else "normal"
        rng = random.Random(hashlib.sha256(str(self.seed).encode() + b"\0" + raw).digest())
        order, prose = self._obey(prompt, ids, id_aware, rng) if fault == "injection" else (None, None)
        if prose is not None:
            output = prose
        elif schema is not None:
            output = json.dumps(fill_schema(schema, ids, rng, mode, order))
        elif ids:
            output = "Simulated answer. Ranking: " + ", ".join(order or arrange_ids(ids, rng, mode))
        else:
            output = "Simulated answer."
        finish = "tool_calls" if tool else "stop"
        if fault == "malformed_json":
            output = MALFORMED
        elif fault == "truncated":
            output, finish = output[: len(output) // 2], "length"

        message: dict[str, Any] = {"role": "assistant", "content": output, "refusal": None}
        if tool:
            call = {
                "id": f"call_sim{serial:08x}",
                "type": "function",
                "function": {"name": tool, "arguments": output},
            }
            message.update(content=None, tool_calls=[call])
        completion = _tokens(len(output))
        answer = {
            "id": f"chatcmpl-sim{serial:08x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": _tokens(prompt_chars),
                "completion_tokens": completion,
                "total_tokens": _tokens(prompt_chars) + completion,
            },
            "system_fingerprint": "sim",
        }
        return 200, answer, {}

    def _obey(
        self, prompt: str, ids: list[str], id_aware: bool, rng: random.Random
    ) -> tuple[list[str] | None, str | None]:
        """The `injection` fault: (bent candidate order, None) or (None, prose); counts the mode."""
        mode = sim_injection.choose_mode(id_aware, rng)
        with self.lock:
            self.injection_modes[mode] += 1
        texts = sim_injection.candidate_texts(prompt, ids)
        injected = sim_injection.injected_item(texts, ids, rng) if ids else None
        if mode == "prose" or injected is None:
            return None, sim_injection.prose_answer(injected)
        arranged = arrange_ids(ids, rng, "normal")
        foreign = sim_injection.foreign_id(texts, ids)
        return sim_injection.obedient_order(arranged, mode, injected, foreign), None

    @staticmethod
    def _target(body: dict[str, Any], ids: list[str]) -> tuple[str | None, dict[str, Any] | None]:
        """Which tool to call (or None) and which schema the answer must satisfy (or None)."""
        tools = [
            t["function"]
            for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(t.get("function"), dict)
        ]
        choice = body.get("tool_choice")
        fmt = body.get("response_format") or {}
        forced = isinstance(choice, dict) or choice == "required"
        if tools and choice != "none" and (forced or fmt.get("type") != "json_schema"):
            chosen = tools[0]
            if isinstance(choice, dict):
                wanted = (choice.get("function") or {}).get("name")
                chosen = next((t for t in tools if t.get("name") == wanted), chosen)
            params = chosen.get("parameters") or {"type": "object", "properties": {}}
            return str(chosen.get("name", "tool")), params
        if fmt.get("type") == "json_schema":
            return None, (fmt.get("json_schema") or {}).get("schema") or {"type": "object", "properties": {}}
        if fmt.get("type") == "json_object":
            written = schema_in_prompt(body.get("messages") or [])
            if written is not None:  # the schema the prompt asks for, as a model that reads it
                return None, written
            if ids:
                return None, {
                    "type": "object",
                    "properties": {"ranking": {"type": "array", "items": {"type": "string"}}},
                }
            return None, {"type": "object", "properties": {"answer": {"type": "string"}}}
        return None, None
