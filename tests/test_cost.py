"""The cost before the first call: prices, `--dry-run` with a hosted model (no network, nothing
written), an unknown price, and the plan against what a simulator run measured."""

from __future__ import annotations

import json
import socket
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
    argv = ["reproduce", "memrec", "--dataset", str(shared_data / "CDs-100-user-dense"), "--users", "8"]
    assert main([*argv, "--llm", "openai:gpt-4o-mini", "--dry-run", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "memrec: 8 users × 4 = 32" in text
    assert "vanilla_llm: 8 users × 1 = 8" in text
    assert "input +" in text and "output tokens, $" in text
    assert "at gpt-4o-mini's $0.15/$0.6 per 1M" in text
    assert not out.exists()  # nothing written
    assert no_outside_network == []


def test_unknown_price_says_so(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["reproduce", "arag", "--dataset", str(shared_data / "CDs-100-user-dense"), "--users", "4"]
    assert main([*argv, "--llm", "openai:my-model", "--dry-run", "--out", str(tmp_path / "x")]) == 0
    text = capsys.readouterr().out
    assert "price unknown: my-model is not in bench/cost/prices.json" in text
    assert "$" not in text.split("planned tokens:")[1].split("\n")[0]


AMEM4REC_TRAINING = (
    "AMEM4Rec's pool training grows faster than its users (each window links to and evolves the memories "
    "other users left): the probe's per-user figure from 5 users under-plans 8 users' training by ~1/3"
)


@pytest.mark.parametrize(
    "paper",
    [
        "memrec",
        "arag",
        pytest.param("amem4rec", marks=pytest.mark.xfail(reason=AMEM4REC_TRAINING, strict=True)),
    ],
)
def test_sim_plan_within_15_percent_of_measured(shared_data: Path, tmp_path: Path, paper: str) -> None:
    out = tmp_path / paper
    argv = ["reproduce", paper, "--dataset", str(shared_data / "CDs-100-user-dense"), "--users", "8"]
    argv += ["--min-user-interactions", "0"]  # its users have 8 interactions; AMEM4Rec's filter wants 11
    assert main([*argv, "--llm", "sim", "--out", str(out)]) == 0
    costs = json.loads((out / "reproduce.json").read_text())["cost"]
    assert {row["method"] for row in costs} >= {paper}
    for row in costs:
        planned, measured = row["planned"], row["measured"]
        assert measured["calls"] > 0, row
        for key in ("input_tokens", "output_tokens"):
            assert measured[key] == pytest.approx(planned[key], rel=0.15), (
                row["scenario"],
                row["method"],
                key,
            )
    assert "tokens measured / planned" in (out / "reproduce.md").read_text()
