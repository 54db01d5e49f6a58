"""A LangSmith-compatible tracing endpoint on loopback, for tests: it answers what the langsmith
client calls while tracing and giving feedback (`/info`, `/runs/multipart`, `/runs/batch`,
`/runs` POST and PATCH, `/feedback`) and records every run and feedback it receives.

Runs arrive as `post` and `patch` operations (multipart parts `post.<id>`, `post.<id>.inputs`,
`patch.<id>.outputs`, ...); `runs()` merges them per run id, `tree()` rebuilds a trace.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import zstandard

INFO = {
    "version": "0.12.0",
    "license_expiration_time": None,
    "batch_ingest_config": {
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
        "scale_up_nthreads_limit": 1,
        "scale_up_qsize_trigger": 1000,
        "scale_down_nempty_trigger": 4,
    },
    "instance_flags": {"zstd_compression_enabled": True},
}
"""What `/info` answers: like LangSmith, multipart ingestion compressed with zstd; a version recent
enough that the client sends feedback given a `trace_id` in the background, beside the runs."""


class LangSmithStub:
    """The recording server; use as a context manager (`with LangSmithStub() as stub:`)."""

    def __init__(self, refuse_uploads: bool = False, stall_uploads: bool = False) -> None:
        """Bind a free loopback port (the server starts on `__enter__`). `/info` always answers;
        with `refuse_uploads` every upload gets a 503 (a server failing mid-run), with
        `stall_uploads` no upload is answered until the stub stops (a server hanging mid-run)."""
        self.refuse_uploads = refuse_uploads
        self.stall_uploads = stall_uploads
        self._released = threading.Event()
        self.operations: list[tuple[str, dict[str, Any]]] = []
        """("post" | "patch", run fields) in arrival order."""
        self.feedback: list[dict[str, Any]] = []
        """Every feedback body received."""
        self.paths: list[str] = []
        """"METHOD /path" of every request, in order."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The endpoint to put in LANGSMITH_ENDPOINT."""
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LangSmithStub:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def record(self, method: str, path: str, body: bytes, content_type: str) -> Any:
        """Store what one request carried; returns the JSON answer."""
        with self._lock:
            self.paths.append(f"{method} {path}")
            if path == "/runs/multipart":
                for operation, fields in multipart_operations(body, content_type):
                    if operation == "feedback":
                        self.feedback.append(fields)
                    else:
                        self.operations.append((operation, fields))
            elif path == "/runs/batch":
                data = json.loads(body)
                self.operations.extend(("post", run) for run in data.get("post") or [])
                self.operations.extend(("patch", run) for run in data.get("patch") or [])
            elif path == "/runs" and method == "POST":
                self.operations.append(("post", json.loads(body)))
            elif path.startswith("/runs/") and method == "PATCH":
                self.operations.append(("patch", {**json.loads(body), "id": path.rsplit("/", 1)[-1]}))
            elif path == "/feedback" and method == "POST":
                self.feedback.append(json.loads(body))
                return {"id": self.feedback[-1].get("id")}
        return {}

    def runs(self) -> dict[str, dict[str, Any]]:
        """Every run by id, its post and patches merged (later fields win)."""
        merged: dict[str, dict[str, Any]] = {}
        with self._lock:
            for _, fields in self.operations:
                merged.setdefault(str(fields["id"]), {}).update(fields)
        return merged

    def roots(self) -> list[dict[str, Any]]:
        """Runs without a parent, in start order."""
        return sorted(
            (run for run in self.runs().values() if not run.get("parent_run_id")),
            key=lambda run: str(run.get("dotted_order", "")),
        )

    def tree(self, root_id: str) -> dict[str, Any]:
        """The run `root_id` with `children` (recursively, in dotted order)."""
        runs = self.runs()
        children: dict[str, list[dict[str, Any]]] = {}
        for run in runs.values():
            if run.get("parent_run_id"):
                children.setdefault(str(run["parent_run_id"]), []).append(run)

        def build(run: dict[str, Any]) -> dict[str, Any]:
            below = sorted(children.get(str(run["id"]), []), key=lambda r: str(r.get("dotted_order", "")))
            return {**run, "children": [build(child) for child in below]}

        return build(runs[str(root_id)])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                encoding = self.headers.get("Content-Encoding")
                if encoding == "gzip":
                    body = gzip.decompress(body)
                elif encoding == "zstd":
                    body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
                path = self.path.split("?", 1)[0]
                path = path.removeprefix("/api/v1")
                if self.command == "GET" and path == "/info":
                    stub.paths.append("GET /info")
                    answer: Any = INFO
                elif stub.stall_uploads:
                    stub.paths.append(f"{self.command} {path} (stalled)")
                    stub._released.wait(120)
                    return
                elif stub.refuse_uploads:
                    stub.paths.append(f"{self.command} {path} (refused)")
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                else:
                    answer = stub.record(self.command, path, body, self.headers.get("Content-Type", ""))
                payload = json.dumps(answer).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = _answer

            def log_message(self, *args: Any) -> None:  # keep test output clean
                return

        return Handler


def multipart_operations(body: bytes, content_type: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The operations in a `/runs/multipart` body: `post.<id>` / `patch.<id>` parts carry a run,
    `<op>.<id>.<field>` parts one field of it (inputs, outputs, events...), `feedback.<id>` parts
    one feedback."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition") or ""
        operation, _, rest = name.partition(".")
        if operation not in ("post", "patch", "feedback"):
            continue
        run_id, _, field = rest.partition(".")
        value = json.loads(part.get_payload(decode=True) or b"null")
        fields = runs.setdefault((operation, run_id), {"id": run_id})
        if field:
            fields[field] = value
        else:
            fields.update(value)
    for (operation, _), fields in runs.items():
        yield operation, fields


@contextmanager
def langsmith_stub() -> Iterator[LangSmithStub]:
    """A running stub (stopped after)."""
    with LangSmithStub() as stub:
        yield stub
