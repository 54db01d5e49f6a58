"""AMEM4Rec training: windows from the training part of histories only, the plan and its cap, and a
driver whose pool does not depend on concurrency and is the same after a kill and a rerun."""

from dataclasses import replace
from pathlib import Path

import pytest

from agents.amem4rec.windows import plan_windows, training_items, window_items
from graphs.amem4rec.train_graph import graph as train_graph
from graphs.amem4rec.training import train_pool, training_summary
from recgraph.cli import main
from state.amem4rec.context import Amem4RecContext
from tests.fakes import PatternModel, install
from tools.amem4rec import pool as memory_pool
from tools.amem4rec.pool import MemoryPool
from tools.amem4rec.pool_postgres import PostgresPool
from tools.amem4rec.pool_sqlite import SqlitePool
from world.environment import get_environment
from world.errors import InvalidRecInput


@pytest.fixture
def users(amem_histories: dict[str, list[str]]) -> list[str]:
    """Every user of the AMEM4Rec catalog, in catalog order."""
    return list(amem_histories)


def test_windows_never_reach_the_validation_or_test_interaction(
    amem_dataset: str, amem_histories: dict[str, list[str]], users: list[str]
) -> None:
    env = get_environment(amem_dataset)
    for user, items in amem_histories.items():
        assert training_items(env, user) == items[:-2]
    plan = plan_windows(env, users, 3, 0)
    assert len(plan) == len(users) * 4  # 6 training items: windows start at 0..3
    for ref in plan:
        assert ref.start + 3 <= len(amem_histories[ref.user_id]) - 2
    capped = plan_windows(env, ["b", "a"], 3, 2)
    assert [(r.user_id, r.start) for r in capped] == [("a", 2), ("a", 3), ("b", 2), ("b", 3)]
    with pytest.raises(InvalidRecInput, match="window start 4 is outside user 'a'"):
        window_items(env, "a", 4, 3)
    with pytest.raises(InvalidRecInput, match="window start 4"):
        train_graph.invoke({"user_id": "a", "start": 4}, context=Amem4RecContext(dataset=amem_dataset))
    ml = get_environment("ml-100k")
    for ref in plan_windows(ml, list(ml.cases)[:60], 3, 10):
        case = ml.cases[ref.user_id]
        assert ref.start + 3 <= len(case.history)
        assert window_items(ml, ref.user_id, ref.start, 3) == [
            e.item_id for e in case.history[ref.start : ref.start + 3]
        ]


def test_prompts_show_training_items_only(
    amem_dataset: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = install(monkeypatch, PatternModel())
    ctx = Amem4RecContext(
        dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_pool=str(tmp_path / "pool")
    )
    train_pool(get_environment(amem_dataset), ctx, ["a"], concurrency=2)
    extraction = [
        str(m[-1].content) for m in model.received if "consecutive interactions" in str(m[-1].content)
    ]
    assert len(extraction) == 4
    assert not any("[2]" in text or "[9]" in text for text in extraction)  # a's validation and test items


def pool_after(ctx: Amem4RecContext, dataset: str, users: list[str], concurrency: int) -> MemoryPool:
    return train_pool(get_environment(dataset), ctx, users, concurrency).pool


def test_concurrency_does_not_change_the_pool(
    amem_dataset: str, users: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool_backend: str
) -> None:
    install(monkeypatch, PatternModel())
    ctx = Amem4RecContext(dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_round_windows=5)
    one = pool_after(replace(ctx, amem4rec_pool=str(tmp_path / "one")), amem_dataset, users, 1)
    five = pool_after(replace(ctx, amem4rec_pool=str(tmp_path / "five")), amem_dataset, users, 5)
    assert one.fingerprint() == five.fingerprint()
    summary = training_summary(
        train_pool(get_environment(amem_dataset), replace(ctx, amem4rec_pool=str(tmp_path / "one")), users, 1)
    )
    assert (
        summary["windows"] == 24
        and summary["this_run"]["windows"] == 0
        and summary["this_run"]["llm_calls"] == 0
    )
    assert sum(summary["actions"].values()) == 24
    assert set(summary["actions"]) == {"store_only", "update_and_store", "update_only", "skipped"}
    assert summary["actions"]["skipped"] == 0 and summary["stored_separately"] == 0
    assert summary["stored"] == summary["pool_size"] == one.size()
    assert sum(summary["evolution_histogram"].values()) == one.size()
    assert summary["agent_calls_per_window"] <= 3
    assert summary["agents"]["extract"]["invocations"] == 24


class Killed(Exception):
    pass


def test_a_run_killed_while_applying_finishes_with_the_same_pool(
    amem_dataset: str, users: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool_backend: str
) -> None:
    install(monkeypatch, PatternModel())
    ctx = Amem4RecContext(dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_round_windows=5)
    whole = pool_after(replace(ctx, amem4rec_pool=str(tmp_path / "whole")), amem_dataset, users, 3)
    env = get_environment(amem_dataset)
    killed = replace(ctx, amem4rec_pool=str(tmp_path / "killed"))

    original = memory_pool.apply_window
    applied: list[str] = []

    def die_at_13(session: object, plan: dict, memory_chars: int) -> dict:
        applied.append(plan["window_key"])
        if len(applied) == 13:  # in the middle of the third round's commits
            raise Killed
        return original(session, plan, memory_chars)

    monkeypatch.setattr(memory_pool, "apply_window", die_at_13)
    with pytest.raises(Killed):
        train_pool(env, killed, users, 3)
    monkeypatch.setattr(memory_pool, "apply_window", original)
    rerun = train_pool(env, killed, users, 3)
    # A round commits as one transaction: the third round's two applied windows were rolled back.
    assert rerun.applied_before == 10 and rerun.applied_now == 14
    assert rerun.rounds == [[r.key for r in rerun.plan[15:20]], [r.key for r in rerun.plan[20:]]]
    assert rerun.pool.fingerprint() == whole.fingerprint()
    assert rerun.pool.size() == len({m for m in rerun.pool.memories()})


def test_a_run_killed_while_proposing_finishes_with_the_same_pool(
    amem_dataset: str, users: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pool_backend: str
) -> None:
    install(monkeypatch, PatternModel())
    ctx = Amem4RecContext(dataset=amem_dataset, llm="openai:gpt-4o-mini", amem4rec_round_windows=4)
    whole = pool_after(replace(ctx, amem4rec_pool=str(tmp_path / "whole")), amem_dataset, users, 2)
    killed = replace(ctx, amem4rec_pool=str(tmp_path / "killed"))
    store = PostgresPool if pool_backend == "postgres" else SqlitePool
    original = store.log_proposal
    logged = []

    def log_then_die(self: MemoryPool, plan: dict) -> None:
        original(self, plan)
        logged.append(plan["window_key"])
        if len(logged) == 10:  # two of the third round's four proposals are logged
            raise Killed

    monkeypatch.setattr(store, "log_proposal", log_then_die)
    with pytest.raises(Killed):
        pool_after(killed, amem_dataset, users, 1)
    monkeypatch.setattr(store, "log_proposal", original)
    rerun = train_pool(get_environment(amem_dataset), killed, users, 2)
    assert rerun.applied_before == 8
    unlogged = [r.key for r in rerun.plan[8:12] if r.key not in logged]
    assert len(unlogged) == 2 and rerun.rounds[0] == unlogged  # only the unlogged ones are asked again
    assert rerun.pool.fingerprint() == whole.fingerprint()


def test_cli_plans_trains_and_resumes(
    amem_dataset: str, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    pool = str(tmp_path / "pool")
    args = ["amem4rec", "train", "--dataset", amem_dataset, "--pool", pool]
    args += ["--users", "3", "--windows-per-user", "2"]
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "3 users, 6 windows of 3 training items (2 per user, latest first), 6 still to train" in out
    assert "at most 18 LLM agent calls" in out and "backend: heuristic" in out
    assert "memories by evolution count" in out and "Eq. 7 actions" in out
    assert main(args) == 0
    again = " ".join(capsys.readouterr().out.split())
    assert (
        "6 still to train" not in again
        and "0 still to train" in again
        and "this run trained 0 windows" in again
    )
