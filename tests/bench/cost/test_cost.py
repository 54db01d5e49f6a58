"""The cost before the first call: prices, `--dry-run` with a hosted model (no network, nothing
written), an unknown price, and the plan against what a simulator run measured."""

from __future__ import annotations

import json
import socket
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest

from agents.usage import PRICES_PER_MILLION
from bench.cost.measured import measured_usage
from bench.cost.prices import price_for, price_table
from recgraph.cli import main


def test_price_table_matches_usage_records() -> None:
    read_on, table = price_table()
    assert read_on
    assert {m: (p.input, p.output) for m, p in table.items()} == PRICES_PER_MILLION
    price = price_for("openai:gpt-4o-mini-2024-07-18")
    assert price is not None and price.model == "gpt-4o-mini"
    assert price.dollars(1_000_000, 1_000_000) == pytest.approx(0.75)
    assert price_for("openai:my-model") is None and price_for("sim") is None


def test_measured_usage_adds_prepare_blocks() -> None:
    entry = {
        "llm_calls": 4,
        "input_tokens": 100,
        "output_tokens": 10,
        "stage_w": {"llm_calls": 2, "input_tokens": 50, "output_tokens": 5},
    }
    usage = measured_usage(entry)
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (6, 150, 15)


@pytest.fixture
def no_outside_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Refuse every connection that is not to the loopback interface; returns the refused ones."""
    refused: list[object] = []
    connect = socket.socket.connect

    def guarded(self: socket.socket, address: object) -> object:
        host = address[0] if isinstance(address, tuple) else ""
        if self.family in (socket.AF_INET, socket.AF_INET6) and host not in ("127.0.0.1", "::1", "localhost"):
            refused.append(address)
            raise OSError(f"network refused in test: {address}")
        return connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return refused


def test_dry_run_hosted_prints_calls_tokens_dollars(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], no_outside_network: list[object]
) -> None:
    out = tmp_path / "dry"
    argv = ["reproduce", "memrec", "--dataset", f"Goodreads={shared_data / 'CDs-100-user-dense'}"]
    argv += ["--users", "8"]
    assert main([*argv, "--llm", "openai:gpt-4o-mini", "--dry-run", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "Goodreads/classic · memrec: 8 users × 4 = 32" in text
    assert "Goodreads/classic · vanilla_llm: 8 users × 1 = 8" in text
    assert "input +" in text and "output tokens, $" in text
    assert "at gpt-4o-mini's $0.15/$0.6 per 1M" in text
    assert not out.exists()  # nothing written
    assert no_outside_network == []


def test_unknown_price_says_so(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["reproduce", "arag", "--dataset", f"Home={shared_data / 'CDs-100-user-dense'}", "--users", "4"]
    assert main([*argv, "--llm", "openai:my-model", "--dry-run", "--out", str(tmp_path / "x")]) == 0
    text = capsys.readouterr().out
    assert "price unknown: my-model is not in bench/cost/prices.json" in text
    assert "$" not in text.split("planned tokens:")[1].split("\n")[0]


def test_prepare_growth_is_the_line_through_two_probes() -> None:
    """Hand-computed: 5 users spend 20 training calls (2,000 input tokens), 10 users 60 (6,000): the
    slope is 8 calls and 800 tokens a user, the intercept -20 calls and -2,000 tokens; with 1 ranking
    call (100 tokens) a user, 20 users plan -20 + 20 × 9 = 160 calls and -2,000 + 20 × 900 = 16,000."""
    from bench.run.cost_probe import _fitted

    def entry(users: int, calls: int, tokens: int) -> dict:
        training = {"llm_calls": calls, "input_tokens": tokens, "output_tokens": calls * 10}
        ranking = {"llm_calls": users, "input_tokens": 100 * users, "output_tokens": 5 * users}
        return {**ranking, "training": training}

    probed = _fitted((5, entry(5, 20, 2000)), (10, entry(10, 60, 6000)), {"rec": 1.0})
    assert (probed.per_user.calls, probed.per_user.input_tokens) == (9, 900)
    assert (probed.fixed.calls, probed.fixed.input_tokens, probed.fixed.output_tokens) == (-20, -2000, -200)
    planned = probed.for_users(20)
    assert (planned.calls, planned.input_tokens, planned.output_tokens) == (160, 16000, 20 * 85 - 200)
    assert probed.for_users(10) == measured_usage(entry(10, 60, 6000))  # the line passes through the probe
    assert probed.for_users(1).calls == 0  # below the line's root: nothing, never negative
    assert probed.rank_output == 5 and probed.users == (5, 10)


def _ratios(costs: list[dict]) -> None:
    """Every planned row within ±15% of what the run measured (calls above 0)."""
    for row in costs:
        planned, measured = row["planned"], row["measured"]
        assert measured["calls"] > 0, row
        for key in ("input_tokens", "output_tokens"):
            where = (row["run"], row["method"], key)
            assert measured[key] == pytest.approx(planned[key], rel=0.15), where


@pytest.mark.parametrize("paper", ["memrec", "arag", "amem4rec"])
def test_sim_plan_within_15_percent_of_measured(shared_data: Path, tmp_path: Path, paper: str) -> None:
    out = tmp_path / paper
    name = {"memrec": "Goodreads", "arag": "Home", "amem4rec": "CDs"}[paper]
    argv = ["reproduce", paper, "--dataset", f"{name}={shared_data / 'CDs-100-user-dense'}", "--users", "8"]
    argv += ["--min-user-interactions", "0"]  # its users have 8 interactions; AMEM4Rec's filter wants 11
    assert main([*argv, "--llm", "sim", "--out", str(out)]) == 0
    costs = json.loads((out / "reproduce.json").read_text())["cost"]
    assert {row["method"] for row in costs} >= {paper}
    _ratios(costs)
    assert "tokens measured / planned" in (out / "reproduce.md").read_text()
    # the scenario's own bench report shows the same plan beside what it measured
    block = json.loads((out / name / "classic" / "metrics.json").read_text())["planned_vs_measured"]
    ours = next(row for row in costs if row["method"] == paper)
    assert block[paper]["planned"]["input_tokens"] == ours["planned"]["input_tokens"]
    assert block[paper]["measured"]["input_tokens"] == ours["measured"]["input_tokens"]
    assert (
        "LLM calls and tokens: planned beside measured" in (out / name / "classic" / "report.md").read_text()
    )


def test_amem4rec_training_growth_planned_past_the_probes(shared_data: Path) -> None:
    """14 users: more than the probes' 5 and 10, so the pool training's cost is the fitted line (the
    first round of windows meets an empty pool and asks only the extractor; a per-user mean of the
    5-user probe planned 1/3 too little)."""
    from bench.cost.planned_calls import planned_calls
    from bench.protocol.plan import plan_cases
    from bench.run.cost_probe import probe
    from bench.run.runner import run_benchmark
    from llmsim.process import SimServer
    from recgraph.cli import build_parser
    from recgraph.llm_session import context_from_args
    from recgraph.protocol_args import protocol_from_args
    from world.environment import get_environment
    from world.results_log import ResultsLog

    dataset = str(shared_data / "CDs-100-user-dense")
    args = build_parser().parse_args(
        ["bench", "--dataset", dataset, "--methods", "amem4rec", "--users", "14", "--llm", "sim"]
    )
    protocol = protocol_from_args(args, "sim")
    cases = plan_cases(get_environment(dataset), protocol)
    context = context_from_args(args)
    probed = probe(["amem4rec"], cases, protocol, context)
    assert probed["amem4rec"].users == (5, 10)
    (row,) = planned_calls(["amem4rec"], {"amem4rec": len(cases)}, context, protocol.candidates, probed)
    with tempfile.TemporaryDirectory() as folder, SimServer(seed=protocol.seed) as server:
        sim = replace(context, base_url=server.base_url, llm_timeout=2.0, llm_backoff=0.05)
        log = ResultsLog(Path(folder) / "results.jsonl", protocol.as_dict())
        measured = measured_usage(run_benchmark(["amem4rec"], cases, protocol, log, 4, sim)["amem4rec"])
    assert row.tokens is not None
    assert measured.calls == pytest.approx(row.tokens.calls, rel=0.15)
    assert measured.input_tokens == pytest.approx(row.tokens.input_tokens, rel=0.15)
    assert measured.output_tokens == pytest.approx(row.tokens.output_tokens, rel=0.15)
