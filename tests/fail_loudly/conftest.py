"""Every fail-loudly test starts with no connection failure counted and no cost probe."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agents.breaker import reset_breakers


@pytest.fixture(autouse=True)
def fresh_breakers() -> Iterator[None]:
    """Every test starts (and leaves) with no connection failure counted."""
    reset_breakers()
    yield
    reset_breakers()


@pytest.fixture(autouse=True)
def no_cost_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests script the answers of every backend (tests.fakes.install), so the cost probe's
    run under the loopback simulator before a hosted bench run would consume the script: here the
    probe measures nothing and the plan shows the declared calls (the probe has its own tests:
    tests/bench/cost/test_cost.py, tests/bench/report/test_report_plan.py)."""
    import bench.run.cost_probe

    monkeypatch.setattr(bench.run.cost_probe, "probe", lambda *args, **kwargs: {})
