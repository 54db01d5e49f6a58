"""The fallback share and its thresholds, hand-computed, and attempts against answered calls."""

from __future__ import annotations

from pathlib import Path

from bench.stats.fallbacks import EXIT_TOO_MANY_FALLBACKS, check_fallbacks, fallback_share
from recgraph.cli import main
from tests.fail_loudly.scripted import CandidateEcho, bench_args, metrics_of
from tests.fakes import install


def test_fallback_share_hand_computed(tmp_path: Path, monkeypatch, capsys) -> None:
    install(monkeypatch, CandidateEcho(plan=["ok", "bad", "ok", "ok"]))
    assert main(bench_args(tmp_path)) == 0
    document = metrics_of(tmp_path)
    row = document["methods"]["vanilla_llm"]
    # 4 users, one agent each, one attempt each; one prose answer -> one fallback of four answers.
    assert (row["llm_attempts"], row["llm_calls"], row["llm_answers"], row["fallbacks"]) == (4, 4, 4, 1)
    assert row["fallback_share"] == 0.25
    assert row["agents"]["vanilla_llm_ranker"]["llm_answers"] == 4
    assert document["fallbacks"]["warned"] == {"vanilla_llm": 0.25} and document["fallbacks"]["failed"] == {}
    printed = capsys.readouterr().out
    warning = "WARNING: fallbacks answered more than 5.0% of the LLM agent answers of vanilla_llm 25.0%"
    assert warning in printed
    report = (tmp_path / "report.md").read_text()
    assert "> **WARNING: fallbacks answered more than 5.0%" in report
    assert "| fallback_share |" in report and "| 25.0% |" in report


def test_attempts_and_answered_calls_differ_when_requests_fail(tmp_path: Path, monkeypatch) -> None:
    install(monkeypatch, CandidateEcho(plan=["refused", "ok", "ok", "ok", "ok"]))
    assert main([*bench_args(tmp_path, users=4)[:-2], "--llm-retries", "1", "--out", str(tmp_path)]) == 0
    row = metrics_of(tmp_path)["methods"]["vanilla_llm"]
    assert (row["llm_attempts"], row["llm_calls"], row["fallbacks"], row["fallback_share"]) == (5, 4, 0, 0.0)
    assert row["errors"] == {"connection": 1}


def test_fallback_share_above_the_failure_threshold_fails(tmp_path: Path, monkeypatch, capsys) -> None:
    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "fails")) == EXIT_TOO_MANY_FALLBACKS
    err = capsys.readouterr().err
    assert "recgraph: error: fallback share above 50.0% for vanilla_llm 75.0% (the run fails)" in err
    assert metrics_of(tmp_path / "fails")["fallbacks"]["failed"] == {"vanilla_llm": 0.75}  # outputs written

    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "allowed", "--allow-fallbacks")) == 0
    assert "allowed by --allow-fallbacks" in capsys.readouterr().out

    install(monkeypatch, CandidateEcho(plan=["bad", "bad", "ok", "bad"]))
    assert main(bench_args(tmp_path / "raised", "--fallback-fail", "0.8")) == 0


def test_heuristic_backend_neither_warns_nor_fails(tmp_path: Path, capsys) -> None:
    args = ["bench", "--methods", "vanilla_llm,popularity", "--users", "5", "--out", str(tmp_path)]
    assert main(args) == 0
    document = metrics_of(tmp_path)
    for name in ("vanilla_llm", "popularity"):
        row = document["methods"][name]
        assert row["fallback_share"] is None and row["llm_answers"] == 0 and row["fallbacks"] == 0
    assert document["fallbacks"]["warned"] == {} and "WARNING" not in capsys.readouterr().out


def test_check_fallbacks_thresholds_are_strict() -> None:
    methods = {"a": {"fallback_share": 0.05}, "b": {"fallback_share": 0.5}, "c": {"fallback_share": None}}
    check = check_fallbacks(methods, warn_above=0.05, fail_above=0.5)
    assert check.warned == {"b": 0.5} and check.failed == {} and not check.fails
    assert fallback_share({"fallbacks": 0, "llm_answers": 0}) is None
