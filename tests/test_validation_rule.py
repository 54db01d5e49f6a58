"""The one rule for validation interactions (docs/benchmarking.md, "What learners learn from"): no
learner trains on an evaluated user's validation interaction. An item that only validation
interactions hold is planted; it reaches no learner's training input: not the classic baselines'
matrix and popularity, not the trained baselines' sequences (their validation targets only pick the
epoch), not MemRec's graph nor its Stage W warm-up, not AMEM4Rec's windows, not AgentCF's training
items, not ChainRec's and the routers' planner training world, not the item side of ChainRec's
tools, not the review sample the evidence contract shows. Yet it stays the latest item of the
visible history every ranker reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.agentcf.plan import training_items as agentcf_items
from agents.amem4rec.windows import plan_windows, window_items
from agents.baselines.trained import training_data
from agents.chainrec.offline.training_env import training_environment
from graphs.memrec.warmup import warmup_interaction
from tools.chainrec.episode_corpus import corpus_of
from tools.memrec.adjacency import build_adjacency
from world.environment import Environment, get_environment
from world.item_reviews import training_pairs

PLANTED = "99"
"""Held only by validation interactions (users a, b and c)."""
HISTORIES = {
    "a": ["1", "4", "8", "6", "3", PLANTED, "2"],
    "b": ["2", "5", "3", "7", "1", PLANTED, "4"],
    "c": ["3", "6", "1", "4", "8", PLANTED, "5"],
    "d": ["7", "2", "5", "8", "3", "6", "1"],
    "e": ["6", "1", "3", "4", "5", "7", "8"],
    "f": ["8", "4", "1", "2", "6", "3", "7"],
}
"""user -> items in time order: the last is the test target, the one before it the validation."""


@pytest.fixture
def planted(tmp_path: Path) -> Environment:
    folder = tmp_path / "planted_valid"
    folder.mkdir()
    items = ["item_id:token\tmovie_title:token_seq\tclass:token_seq"]
    items += [f"{i}\tTitle {i}\tDrama" for i in [*map(str, range(1, 9)), PLANTED]]
    (folder / "planted_valid.item").write_text("\n".join(items) + "\n")
    rows = ["user_id:token\titem_id:token\ttimestamp:float\treview:token_seq"]
    rows += [
        f"{user}\t{item}\t{100 * (n + 1)}\treview of {item} by {user}"
        for user, seq in HISTORIES.items()
        for n, item in enumerate(seq)
    ]
    (folder / "planted_valid.inter").write_text("\n".join(rows) + "\n")
    return get_environment(str(folder))


def test_the_planted_item_is_only_a_validation_interaction(planted: Environment) -> None:
    valid = {user for user, case in planted.cases.items() if case.valid and case.valid.item_id == PLANTED}
    assert valid == {"a", "b", "c"}
    assert all(case.target.item_id != PLANTED for case in planted.cases.values())
    assert all(PLANTED not in [e.item_id for e in case.history] for case in planted.cases.values())
    assert planted.history("a")[-1] == PLANTED  # still the latest item every ranker sees


def test_no_learner_trains_on_it(planted: Environment) -> None:
    column = planted.item_index[PLANTED]
    users = list(planted.cases)
    assert planted.popularity.get(PLANTED, 0) == 0
    assert planted.train_matrix.tocsc()[:, column].nnz == 0  # itemknn, bpr, lightgcn's graph
    data = training_data(planted)
    assert all(column not in sequence for sequence in data.sequences.values())  # sasrec, gru4rec
    assert column in data.validation.values()  # ... whose validation targets pick the epoch only
    adjacency = build_adjacency(planted)  # MemRec's memory graph
    assert column not in adjacency.user_items.tolist()
    assert [warmup_interaction(planted, user, "classic")["item_id"] for user in users] == [
        HISTORIES[user][-3] for user in users
    ]  # Stage W writes the latest training interaction, never the validation one
    windows = plan_windows(planted, users, 3, 10)
    assert windows and all(PLANTED not in window_items(planted, w.user_id, w.start, 3) for w in windows)
    assert all(PLANTED not in agentcf_items(planted, user) for user in users)
    world = training_environment(planted)  # ChainRec's and the routers' learned planners
    assert all(e.item_id != PLANTED for e in world.dataset.interactions)
    assert {case.target.item_id for case in world.cases.values()} == {seq[-3] for seq in HISTORIES.values()}
    assert PLANTED not in corpus_of(planted).by_item  # ChainRec's item-side statistics and reviews
    assert all(item != PLANTED for _, item in training_pairs(planted))  # the contract's review sample
