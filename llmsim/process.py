"""`SimServer`: the simulated OpenAI-compatible server (`llmsim.server`) in a child process.

It runs in its own process (and session), so it never shares the client's GIL; the tests,
`recgraph --llm sim` and `recgraph bench perf` start it through this class.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from llmsim.faults import parse_fault_kinds, parse_refused, parse_retry_headers


class SimServer:
    """A simulated server in a child process (own session); use as a context manager.

    `base_url` (ends in `/v1`) is what `ChatOpenAI(base_url=...)` takes.
    """

    def __init__(
        self,
        latency: float = 0.0,
        fault_rate: float = 0.0,
        faults: str | Iterable[str] = "all",
        timeout_delay: float = 3.0,
        seed: int = 0,
        host: str = "127.0.0.1",
        refuse: str | Iterable[str] = (),
        retry_headers: dict[str, str] | None = None,
    ) -> None:
        """Store the options (validated now: unknown fault kinds or refused shapes raise ValueError);
        `refuse`: request shapes (json_schema, json_object, tools) the server answers with HTTP 400;
        `retry_headers`: the headers of its `http_429` answers (default `retry-after: 0`)."""
        self.faults = ",".join(parse_fault_kinds(faults))
        self.refuse = ",".join(parse_refused(refuse))
        self.retry_headers = json.dumps(parse_retry_headers(retry_headers))
        self.latency, self.fault_rate, self.timeout_delay = latency, fault_rate, timeout_delay
        self.seed, self.host = seed, host
        self.process: subprocess.Popen[bytes] | None = None
        self.base_url = ""

    @property
    def root_url(self) -> str:
        """The server root (without `/v1`), where `/health` and `/stats` live."""
        return self.base_url.removesuffix("/v1")

    def start(self, ready_timeout: float = 30.0) -> SimServer:
        """Spawn the server and wait for its READY line; raises RuntimeError if it dies or stalls."""
        if self.process is not None:
            raise RuntimeError("SimServer already started")
        root = str(Path(__file__).resolve().parent.parent)
        path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path}
        command = [
            sys.executable,
            "-m",
            "llmsim.server",
            "--host",
            self.host,
            "--port",
            "0",
            "--latency",
            str(self.latency),
            "--fault-rate",
            str(self.fault_rate),
            "--faults",
            self.faults,
            "--timeout-delay",
            str(self.timeout_delay),
            "--seed",
            str(self.seed),
            *(["--refuse", self.refuse] if self.refuse else []),
            "--retry-headers",
            self.retry_headers,
        ]
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the process
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=self._stderr, env=env, start_new_session=True
        )
        lines: queue.Queue[bytes] = queue.Queue()
        stdout = self.process.stdout
        assert stdout is not None
        threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
        try:
            line = lines.get(timeout=ready_timeout).decode().strip()
        except queue.Empty:
            self.stop()
            raise RuntimeError(f"simulated server printed no READY line within {ready_timeout:g} s") from None
        if not line.startswith("READY "):
            code = self.process.wait(timeout=10) if self.process.poll() is None else self.process.returncode
            self._stderr.seek(0)
            err = self._stderr.read().decode(errors="replace").strip()
            self.stop()
            detail = err or line or "no output"
            raise RuntimeError(f"simulated server exited (code {code}) before READY: {detail}")
        self.base_url = line.split(" ", 1)[1]
        return self

    def _call(self, method: str, path: str) -> dict[str, Any]:
        data = b"" if method == "POST" else None
        request = urllib.request.Request(self.root_url + path, method=method, data=data)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        """`GET /stats`: `{"requests": n, "served_ok": n, "faults": {kind: count}}`."""
        return self._call("GET", "/stats")

    def reset_stats(self) -> dict[str, Any]:
        """`POST /stats/reset`: zero the counters; returns the zeroed stats."""
        return self._call("POST", "/stats/reset")

    def stop(self) -> None:
        """SIGTERM the process group, wait up to 5 s, then SIGKILL; safe to call twice."""
        process, self.process = self.process, None
        if process is None:
            return
        for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                break
            try:
                process.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue
        if process.poll() is None:
            process.wait(timeout=5)
        if process.stdout is not None:
            process.stdout.close()
        self._stderr.close()

    def __enter__(self) -> SimServer:
        """Start the server."""
        return self.start()

    def __exit__(self, *exc: object) -> None:
        """Stop the server."""
        self.stop()
