"""`recgraph bench --trace` against a LangSmith endpoint that is dead, fails mid-run or stalls: one
warning, and metrics identical to an untraced run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recgraph.cli import main
from tests.langsmith_bench import BENCH, SIM, warnings_in
from tests.langsmith_stub import LangSmithStub
from tests.ports import free_port


def comparable(out: Path) -> dict[str, Any]:
    """metrics.json without wall-time figures (the only fields allowed to differ between runs)."""

    def scrub(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: scrub(v) for k, v in value.items() if "seconds" not in k}
        return value

    return scrub(json.loads((out / "metrics.json").read_text()))


def test_a_dead_endpoint_costs_one_warning_and_no_metric(tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [*BENCH, "--methods", "arag", *SIM]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
    assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "cannot be reached" in warned[0] and "without tracing" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")


def test_an_endpoint_failing_mid_run_costs_one_warning(tmp_path: Path, monkeypatch, capsys) -> None:
    argv = [*BENCH, "--methods", "arag", "--llm", "heuristic"]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    with LangSmithStub(refuse_uploads=True) as stub:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
        assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
    assert any(path.endswith("(refused)") for path in stub.paths)
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "uploads to" in warned[0] and "failed" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")


def test_a_stalled_endpoint_does_not_hold_the_run(tmp_path: Path, monkeypatch, capsys) -> None:
    import bench.run.tracing

    monkeypatch.setattr(bench.run.tracing, "FLUSH_SECONDS", 1.0)
    argv = [*BENCH, "--methods", "arag", "--llm", "heuristic"]
    assert main([*argv, "--out", str(tmp_path / "plain")]) == 0
    capsys.readouterr()
    with LangSmithStub(stall_uploads=True) as stub:
        monkeypatch.setenv("LANGSMITH_ENDPOINT", stub.url)
        monkeypatch.setenv("LANGSMITH_API_KEY", "dummy")
        assert main([*argv, "--out", str(tmp_path / "traced"), "--trace"]) == 0
        stalled = [path for path in stub.paths if path.endswith("(stalled)")]
    assert stalled and stub.operations == []
    warned = warnings_in(capsys.readouterr().err)
    assert len(warned) == 1 and "stalled" in warned[0]
    assert comparable(tmp_path / "traced") == comparable(tmp_path / "plain")
