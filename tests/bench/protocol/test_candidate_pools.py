"""Pre-generated candidate pools that cover only some users: by default only users with a usable
pool are evaluated (`--mix-candidates` adds the others with uniform negatives), and the run header,
metrics.json (`candidates`) and report.md say how candidates were made and who was eligible, and
why. A small sequential-layout fixture: 10 users, pools for 4 of them (one pool mostly seen)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.protocol.eligibility import candidates_block, describe_candidates, eligibility
from bench.protocol.plan import plan_cases, plan_cases_for
from bench.protocol.spec import Protocol
from recgraph.cli import main
from world.environment import get_environment
from world.errors import ProtocolError

ITEMS = [str(i) for i in range(1, 31)]
HISTORIES = {f"u{n}": ([str(n), str(n + 1), str(n + 2), str(n + 3)], str(n + 10)) for n in range(1, 11)}
POOLS = {
    "u1": [str(i) for i in range(16, 31)],
    "u2": [str(i) for i in range(16, 31)],
    "u3": [str(i) for i in range(16, 31)],
    "u4": ["4", "5", "6", "7", "20", "21"],  # 4-7 are u4's own items: 2 usable negatives
}


@pytest.fixture
def pooled(tmp_path: Path) -> str:
    """The fixture written in the sequential layout (titles only, order only, .random pools)."""
    folder = tmp_path / "pooled"
    folder.mkdir()
    (folder / "pooled.item").write_text(
        "item_id:token\ttitle:token_seq\n" + "".join(f"{i}\tRecord number {i}\n" for i in ITEMS)
    )
    rows = "".join(f"{u}\t{' '.join(h)}\t{t}\n" for u, (h, t) in HISTORIES.items())
    (folder / "pooled.test.inter").write_text("user_id:token\titem_id_list:token_seq\titem_id:token\n" + rows)
    (folder / "pooled.random").write_text("".join(f"{u} {' '.join(p)}\n" for u, p in POOLS.items()))
    return str(folder)


def test_only_users_with_a_usable_pool_by_default(pooled: str) -> None:
    env = get_environment(pooled)
    cases = plan_cases(env, Protocol(pooled, candidates=5, users=10))
    assert [c.user_id for c in cases] == ["u1", "u2", "u3"]  # u4's pool has 2 usable negatives < 4
    for case in cases:
        assert set(case.candidates) - {case.target} <= set(POOLS[case.user_id])
    small = plan_cases(env, Protocol(pooled, candidates=3, users=10))
    assert [c.user_id for c in small] == ["u1", "u2", "u3", "u4"]
    assert set(small[3].candidates) == {HISTORIES["u4"][1], "20", "21"}


def test_mixing_adds_the_users_without_a_pool(pooled: str) -> None:
    env = get_environment(pooled)
    cases = plan_cases(env, Protocol(pooled, candidates=3, users=10, mix_candidates=True))
    assert sorted(c.user_id for c in cases) == sorted(HISTORIES)
    by_user = {c.user_id: c for c in cases}
    assert set(by_user["u1"].candidates) - {by_user["u1"].target} <= set(POOLS["u1"])
    seen = set(HISTORIES["u9"][0])
    assert not (set(by_user["u9"].candidates) - {by_user["u9"].target}) & seen  # uniform, unseen


def test_the_steps_say_why(pooled: str) -> None:
    env = get_environment(pooled)
    chosen = eligibility(env, "classic", 5)
    assert chosen.source == "pools" and chosen.pooled == frozenset(POOLS)
    assert [(s.users, s.rule.split(" ")[0]) for s in chosen.steps] == [
        (10, "users"),
        (10, "classic"),
        (3, "has"),
    ]
    assert "at least 4 usable negatives (the dataset ships pools for 4 users" in chosen.steps[2].rule
    protocol = Protocol(pooled, candidates=5, users=2)
    block = candidates_block(env, protocol, plan_cases_for(env, protocol, ["u1", "u3"]))
    assert block["eligible"] == 3 and block["evaluated"] == 2 and block["evaluated_with_pool"] == 2
    assert block["pools"] == 4 and block["source"] == "pools"
    # order only: no evolving scenarios. 18 of the 30 items are never trained on (the 20% quantile is
    # 0); u1's and u2's targets (11, 12) are in u9's and u10's training histories, u3's (13) is not
    assert block["eligible_by_scenario"] == {"classic": 3, "cold_user": 3, "cold_item": 1, "cold_start": 0}
    text = describe_candidates(block)
    assert text.startswith("candidates: the target + 4 negatives drawn from the user's pre-generated pool")
    assert block["cases"] == "recgraph's scenario rules (world/scenarios.py)"
    assert "users with a held-out target: 10 → classic keeps every split user: 10 → has a pre" in text
    assert text.endswith("Evaluated: 2, 2 of them with the dataset's pool.")
    protocol = Protocol(pooled, candidates=3, users=10, mix_candidates=True)
    mixed = candidates_block(env, protocol, plan_cases_for(env, protocol, ["u1", "u9"]))
    assert mixed["source"] == "mixed" and mixed["eligible"] == 10 and mixed["evaluated_with_pool"] == 1


def test_cold_item_states_its_threshold() -> None:
    env = get_environment("ml-100k")
    chosen = eligibility(env, "cold_item", 10)
    assert chosen.source == "uniform" and len(chosen.steps) == 2
    rule = chosen.steps[1].rule
    assert rule.startswith("cold_item keeps users whose target has at most ")
    assert "training interactions (the 20% popularity quantile of the 1682 items)" in rule
    assert 0 < chosen.steps[1].users < chosen.steps[0].users == 943


def test_no_eligible_user_is_one_clear_error(pooled: str) -> None:
    with pytest.raises(
        ProtocolError, match=r"no user of 'pooled' qualifies for 'classic' \(.*usable negatives"
    ):
        plan_cases(get_environment(pooled), Protocol(pooled, candidates=20, users=5))


def test_mixing_is_part_of_the_protocol_only_when_set() -> None:
    assert "mix_candidates" not in Protocol("d").as_dict()  # logs written before the option resume
    assert Protocol("d", mix_candidates=True).as_dict()["mix_candidates"] is True


def test_header_metrics_and_report_say_how(pooled: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    args = ["bench", "--methods", "popularity", "--dataset", pooled, "--candidates", "5", "--users", "10"]
    assert main([*args, "--out", str(out)]) == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "pooled: 3 users" in shown
    assert "candidates: the target + 4 negatives drawn from the user's pre-generated pool" in shown
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["candidates"]["eligible"] == 3 and metrics["methods"]["popularity"]["users"] == 3
    assert "mix_candidates" not in metrics["protocol"]
    assert f"- {describe_candidates(metrics['candidates'])}\n" in (out / "report.md").read_text()
    mixed = tmp_path / "mixed"
    assert main([*args, "--candidates", "3", "--mix-candidates", "--out", str(mixed)]) == 0
    metrics = json.loads((mixed / "metrics.json").read_text())
    assert metrics["protocol"]["mix_candidates"] is True and metrics["methods"]["popularity"]["users"] == 10
    assert metrics["candidates"]["source"] == "mixed" and metrics["candidates"]["evaluated_with_pool"] == 4
