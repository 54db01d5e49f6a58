"""A simulated OpenAI-compatible chat-completions server on loopback, with fault injection.

Used by the tests and by `recgraph bench perf` to measure orchestration overhead without a
real model. Standard library only, so it starts fast; it always runs in its own process
(`python -m llmsim.server`, or `llmsim.process.SimServer`), never sharing the client's GIL.

Endpoints: `POST /v1/chat/completions` (json_schema response_format -> JSON content; json_object ->
JSON following the schema the prompt writes after `SCHEMA_NOTE`; tools -> one tool call; otherwise
plain text; with `--refuse SHAPES`, a request in a refused shape gets the HTTP 400 a model without
it answers; the `http_429` fault's headers are `--retry-headers`), `GET /v1/models`, `GET /health`,
`GET /stats`, `POST /stats/reset`. See `fill_schema` for how answers are built from schemas and prompts.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Iterable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from llmsim.engine import MODEL_ID, Simulator
from llmsim.faults import (
    FAULT_KINDS,
    ID_FAULTS,
    error_body,
    parse_fault_kinds,
    parse_refused,
    parse_retry_headers,
)
from llmsim.schema import extract_candidate_ids, fill_schema

__all__ = [
    "FAULT_KINDS",
    "ID_FAULTS",
    "extract_candidate_ids",
    "fill_schema",
    "main",
    "make_server",
    "parse_fault_kinds",
    "parse_refused",
    "parse_retry_headers",
]


class _Handler(BaseHTTPRequestHandler):
    """HTTP/1.1 keep-alive handler; every response carries Content-Length."""

    protocol_version = "HTTP/1.1"
    server_version = "recgraph-sim/1"
    disable_nagle_algorithm = True
    sim: Simulator

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
            self._send(404, error_body(f"no route GET {path}", "invalid_request_error"))

    def do_POST(self) -> None:
        """`/v1/chat/completions` and `/stats/reset`."""
        path = self.path.split("?")[0].rstrip("/")
        raw = self._body()
        if path == "/stats/reset":
            self._send(200, self.sim.reset())
            return
        if path != "/v1/chat/completions":
            self._send(404, error_body(f"no route POST {path}", "invalid_request_error"))
            return
        self.sim.count_request()
        try:
            body = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(400, error_body(f"request body is not JSON: {exc}", "invalid_request_error"))
            return
        if not isinstance(body, dict):
            self._send(400, error_body("request body must be a JSON object", "invalid_request_error"))
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
    refuse: str | Iterable[str] = (),
    retry_headers: str | dict[str, str] | None = None,
) -> ThreadingHTTPServer:
    """Bind (not yet serving) a simulated server in this process; for `main` and debugging. `refuse`:
    request shapes (json_schema, json_object, tools) answered with HTTP 400, as by a model without them;
    `retry_headers`: the headers of the `http_429` fault (`parse_retry_headers`)."""
    sim = Simulator(
        latency,
        fault_rate,
        parse_fault_kinds(faults),
        timeout_delay,
        seed,
        parse_refused(refuse),
        parse_retry_headers(retry_headers),
    )
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
    parser.add_argument(
        "--refuse", default="", help="shapes answered with HTTP 400: json_schema,json_object,tools"
    )
    parser.add_argument(
        "--retry-headers",
        default="",
        help='JSON object: the http_429 fault\'s headers ({"retry-after": "0"})',
    )
    args = parser.parse_args(argv)
    try:
        kinds = parse_fault_kinds(args.faults)
        refused = parse_refused(args.refuse)
        retry_headers = parse_retry_headers(args.retry_headers)
    except ValueError as exc:
        parser.error(str(exc))
    if args.latency < 0 or args.timeout_delay < 0:
        parser.error("--latency and --timeout-delay must be >= 0")
    if not 0.0 <= args.fault_rate <= 1.0:
        parser.error("--fault-rate must be within [0, 1]")
    server = make_server(
        args.host,
        args.port,
        args.latency,
        args.fault_rate,
        kinds,
        args.timeout_delay,
        args.seed,
        refused,
        retry_headers,
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
