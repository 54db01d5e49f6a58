"""metrics.json counts cold_start's eligible users without splitting the dataset a second time."""

from __future__ import annotations

from pathlib import Path

from bench.protocol.eligibility import candidates_block, cold_start_count
from bench.protocol.plan import plan_cases
from bench.protocol.spec import Protocol
from world.environment import get_environment
from world.scenarios import cold_start_cases, eligible_users

SIZES = {"a": 1, "b": 2, "c": 2, "d": 3, "e": 4, "f": 6, "g": 3}
"""Interactions per user: b, c (dropped by the default split), d and g (in it) are cold_start's."""


def write(folder: Path) -> str:
    """An atomic dataset whose users have `SIZES` interactions (one repeated item for g)."""
    folder.mkdir()
    items = ["item_id:token\tmovie_title:token_seq"] + [f"{i}\tItem {i}" for i in range(1, 9)]
    (folder / "short.item").write_text("\n".join(items) + "\n")
    rows = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, size in SIZES.items():
        rows += [f"{user}\t{1 if user == 'g' else k + 1}\t4\t{100 * k}" for k in range(size)]
    (folder / "short.inter").write_text("\n".join(rows) + "\n")
    return str(folder)


def test_the_count_is_the_second_splits_and_builds_no_split(tmp_path: Path) -> None:
    env = get_environment(write(tmp_path / "short"))
    assert sorted(env.cases) == ["d", "e", "f", "g"]  # the default split keeps 3+ interactions
    protocol = Protocol(dataset=env.dataset.source, candidates=3, users=4)
    block = candidates_block(env, protocol, plan_cases(env, protocol))
    assert block["eligible_by_scenario"]["cold_start"] == cold_start_count(env) == 4
    assert env.peek("cold_start_cases") is None  # counted, not split
    split = cold_start_cases(env.dataset)
    assert len(eligible_users(split, "cold_start", env.popularity, len(env.item_ids))) == 4
    assert sorted(split) == ["b", "c", "d", "g"]
