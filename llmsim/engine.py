"""The simulated model behind `llmsim.server`: the fault draw and one answer per chat-completions
request (schema-valid JSON, a tool call or plain text), with counters. Which faults and refusals
there are is `llmsim.faults`; what a request asks for, `llmsim.reading`.

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
from typing import Any

from llmsim import injection as sim_injection
from llmsim.faults import FAULT_KINDS, ID_FAULTS, MALFORMED, error_body, parse_retry_headers, refusal
from llmsim.reading import answer_target, message_text
from llmsim.schema import arrange_ids, count_id_arrays, extract_candidate_ids, fill_schema

MODEL_ID = "sim-model"


def _tokens(chars: int) -> int:
    return math.ceil(chars / 4)


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
        `injection` fault enabled, `injection_modes`: its count per mode (`llmsim.injection`)."""
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
        users = [
            message_text(m.get("content"))
            for m in messages
            if isinstance(m, dict) and m.get("role") == "user"
        ]
        prompt = next((text for text in reversed(users) if extract_candidate_ids(text)), "")
        ids = extract_candidate_ids(prompt)
        prompt_chars = sum(len(message_text(m.get("content"))) for m in messages if isinstance(m, dict))

        try:
            tool, schema = answer_target(body, ids)
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
