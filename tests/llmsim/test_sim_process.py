"""The simulated server as a process: concurrent requests overlap, the CLI's one-line exit 2 on bad
faults, its READY line and clean SIGTERM exit, and `SimServer.stop` idempotent and freeing the port."""

from __future__ import annotations

import http.client
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from llmsim.process import SimServer
from tests.llmsim.sim_helpers import chat

REPO = Path(__file__).resolve().parents[2]


def test_thirty_two_concurrent_requests_overlap() -> None:
    with SimServer(latency=0.3) as sim:
        llm = chat(sim)
        started = time.perf_counter()
        answers = llm.batch([f"question {n}" for n in range(32)], config={"max_concurrency": 32})
        elapsed = time.perf_counter() - started
        assert len(answers) == 32 and all(a.content == "Simulated answer." for a in answers)
        assert elapsed < 3.0, f"32 x 0.3 s took {elapsed:.2f} s: the server is not concurrent"
        assert sim.stats()["served_ok"] == 32


def test_cli_bad_faults_exit_2_with_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "llmsim.server", "--faults", "http_429,bogus"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2 and result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "bogus" in lines[0]
    with pytest.raises(ValueError, match="bogus"):
        SimServer(faults="bogus")


def test_cli_ready_line_and_sigterm_exit_0() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "llmsim.server", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        line = process.stdout.readline()
        assert line.startswith("READY http://127.0.0.1:") and line.rstrip().endswith("/v1")
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/health")
        assert json.loads(conn.getresponse().read()) == {"ok": True}
        conn.close()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        process.stdout.close()


def test_simserver_stop_is_idempotent_and_frees_the_port() -> None:
    sim = SimServer().start()
    port = urlsplit(sim.base_url).port
    sim.stop()
    sim.stop()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    with pytest.raises(OSError):
        conn.request("GET", "/health")
        conn.getresponse()
    conn.close()
