"""A simulated OpenAI-compatible chat-completions server on loopback, with fault injection.

Used by the tests and by `recgraph bench perf` to measure orchestration overhead without a
real model. Standard library only, so it starts fast; it always runs in its own process
(`python -m bench.sim_server`, or `bench.sim_process.SimServer`), never sharing the client's GIL.

Endpoints: `POST /v1/chat/completions` (json_schema response_format -> JSON content; tools ->
one tool call; otherwise plain text), `GET /v1/models`, `GET /health`, `GET /stats`,
`POST /stats/reset`. See `fill_schema` for how answers are built from schemas and prompts.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import signal
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from bench import sim_injection
from bench.sim_schema import arrange_ids, count_id_arrays, extract_candidate_ids, fill_schema

__all__ = [
    "FAULT_KINDS",
    "ID_FAULTS",
    "extract_candidate_ids",
    "fill_schema",
    "main",
    "make_server",
    "parse_fault_kinds",
]

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


def _error(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


class _Simulator:
    """The state shared by all handler threads: configuration, fault RNG and counters."""

    def __init__(
        self, latency: float, fault_rate: float, faults: tuple[str, ...], timeout_delay: float, seed: int
    ) -> None:
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
            self.injection_modes = dict.fromkeys(sim_injection.INJECTION_MODES, 0)
        return self.stats()

    def count_request(self) -> None:
        with self.lock:
            self.requests += 1

    def stats(self) -> dict[str, Any]:
        """`requests`: every POST /v1/chat/completions (400s included); `served_ok`: normal
        answers; `faults`: injected faults per kind (every kind listed, zero included); with the
        `injection` fault enabled, `injection_modes`: its count per mode (`bench.sim_injection`)."""
        with self.lock:
            stats: dict[str, Any] = {"requests": self.requests, "served_ok": self.served_ok}
            stats["faults"] = dict(self.fault_counts)
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
            return 400, _error("'messages' must be a non-empty list", "invalid_request_error"), {}
        if body.get("stream"):
            message = "stream=true is not supported by the simulated server; call without streaming"
            return 400, _error(message, "invalid_request_error"), {}
        # The latest user message that lists candidates: a retry's last turn may be only the note.
        users = [_text(m.get("content")) for m in messages if isinstance(m, dict) and m.get("role") == "user"]
        prompt = next((text for text in reversed(users) if extract_candidate_ids(text)), "")
        ids = extract_candidate_ids(prompt)
        prompt_chars = sum(len(_text(m.get("content"))) for m in messages if isinstance(m, dict))

        try:
            tool, schema = self._target(body, ids)
            id_arrays = count_id_arrays(schema, ids) if schema is not None else 0
        except (LookupError, TypeError, ValueError, AttributeError) as exc:
            return 400, _error(f"cannot fill the requested schema: {exc!r}", "invalid_request_error"), {}
        id_aware = bool(ids) and (schema is None or id_arrays > 0)
        fault, serial = self.draw(id_aware, raw)
        time.sleep(self.latency)
        if fault == "http_429":
            error = _error("Rate limit reached for sim-model (simulated).", "requests", "rate_limit_exceeded")
            return 429, error, {"retry-after": "0"}
        if fault == "http_500":
            return (
                500,
                _error("The server had an error while processing your request (simulated).", "server_error"),
                {},
            )
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
            if ids:
                return None, {
                    "type": "object",
                    "properties": {"ranking": {"type": "array", "items": {"type": "string"}}},
                }
            return None, {"type": "object", "properties": {"answer": {"type": "string"}}}
        return None, None


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive handler; every response carries Content-Length."""

    protocol_version = "HTTP/1.1"
    server_version = "recgraph-sim/1"
    disable_nagle_algorithm = True
    sim: _Simulator

    def log_message(self, format: str, *args: Any) -> None:
        """Silence per-request logging."""

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    def _body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def do_GET(self) -> None:
        """`/health`, `/stats`, `/v1/models`."""
        path = self.path.split("?")[0].rstrip("/")
        if path == "/health":
            self._send(200, {"ok": True})
        elif path == "/stats":
            self._send(200, self.sim.stats())
        elif path == "/v1/models":
            model = {"id": MODEL_ID, "object": "model", "created": 0, "owned_by": "recgraph-sim"}
            self._send(200, {"object": "list", "data": [model]})
        else:
            self._send(404, _error(f"no route GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        """`/v1/chat/completions` and `/stats/reset`."""
        path = self.path.split("?")[0].rstrip("/")
        raw = self._body()
        if path == "/stats/reset":
            self._send(200, self.sim.reset())
            return
        if path != "/v1/chat/completions":
            self._send(404, _error(f"no route POST {path}", "invalid_request_error"))
            return
        self.sim.count_request()
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(400, _error(f"request body is not JSON: {exc}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send(400, _error("request body must be a JSON object", "invalid_request_error"))
            return
        self._send(*self.sim.complete(body, raw))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 256

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (timeouts) are expected; stay quiet about them."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


def make_server(
    host: str = "127.0.0.1",
    port: int = 0,
    latency: float = 0.0,
    fault_rate: float = 0.0,
    faults: str | Iterable[str] = "all",
    timeout_delay: float = 3.0,
    seed: int = 0,
) -> ThreadingHTTPServer:
    """Bind (not yet serving) a simulated server in this process; for `main` and debugging."""
    sim = _Simulator(latency, fault_rate, parse_fault_kinds(faults), timeout_delay, seed)
    handler = type("SimHandler", (_Handler,), {"sim": sim})
    return _Server((host, port), handler)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        """One line on stderr, exit 2."""
        self.exit(2, f"{self.prog}: error: {message}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGTERM/SIGINT after printing `READY http://<host>:<port>/v1`; returns 0.

    Bad options (an unknown fault kind, a negative latency, a fault rate outside [0, 1])
    print one line on stderr and exit 2.
    """
    parser = _Parser(prog="sim_server", description="Simulated OpenAI-compatible server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--faults", default="all")
    parser.add_argument("--timeout-delay", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        kinds = parse_fault_kinds(args.faults)
    except ValueError as exc:
        parser.error(str(exc))
    if args.latency < 0 or args.timeout_delay < 0:
        parser.error("--latency and --timeout-delay must be >= 0")
    if not 0.0 <= args.fault_rate <= 1.0:
        parser.error("--fault-rate must be within [0, 1]")
    server = make_server(
        args.host, args.port, args.latency, args.fault_rate, kinds, args.timeout_delay, args.seed
    )
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    print(f"READY http://{args.host}:{server.server_address[1]}/v1", flush=True)
    while not stop.wait(0.5):
        pass
    server.shutdown()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
