"""The retrieval candidate sources (ARAG's recall stage I⁰) on a tiny catalog with hand-made vectors:
`retrieval` takes the top N for the user context as retrieved (a missed target is not swapped in
and scores 0), `retrieval_negatives` draws N−1 negatives from the top K beside the target; recall@N,
metrics over the recalled users, seeded order, and a query that reads only what the scenario shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.protocol.eligibility import candidates_block, describe_candidates
from bench.protocol.plan import plan_cases, plan_cases_for
from bench.protocol.retrieval_candidates import pool_size, retrieval_candidates
from bench.protocol.spec import Protocol
from tools.catalog_index import recall_set, retrieve_candidates
from tools.user_context import user_split
from world.environment import Environment, get_environment

# tiny (tests/conftest.py): u1 sees 1, 6, 3 (target 4); u2 sees 1, 3 (target 6); one session each.
VECTORS = {"1": (1, 0, 0), "2": (1, 0, 0), "3": (1, 0, 0), "4": (0, 1, 0), "5": (0.8, 0.6, 0), "6": (1, 0, 0)}


@pytest.fixture
def tiny(tiny_dataset_dir: Path, monkeypatch: Any) -> Environment:
    env = get_environment(str(tiny_dataset_dir))
    matrix = np.array([VECTORS[item] for item in env.item_ids], dtype=np.float64)
    monkeypatch.setattr(env, "item_vectors", lambda: matrix)
    return env


def candidates_of(env: Environment, user: str, n: int = 2, seed: int = 0, source: str = "retrieval") -> Any:
    target = env.cases[user].target.item_id
    return retrieval_candidates(
        env, user_id=user, target=target, n=n, history=env.history(user),
        interacted=env.interacted(user) - {target}, seed=seed, source=source,
    )  # fmt: skip


def test_top_n_for_the_user_context_over_the_unseen_catalog(tiny: Environment) -> None:
    """u2 (query along axis 0): unseen 2, 4, 5, 6 score 1, 0, 0.8, 1; the top 2 are 2 and the
    target 6 (ties in catalog order): found by the retrieval itself."""
    assert recall_set(tiny, *user_split(tiny, "u2", tiny.history("u2")), 2, {"1", "3"}) == ["2", "6"]
    got = candidates_of(tiny, "u2")
    assert sorted(got.candidates) == ["2", "6"] and got.recalled


def test_a_missed_target_is_not_swapped_in_and_scores_zero(tiny: Environment) -> None:
    """u1: unseen 2, 4, 5 score 1, 0, 0.8; retrieval takes 2 and 5 and misses the target 4, which
    stays out: the user's ranking cannot hold it, so every metric is 0, and the method's
    metrics.json entry reports the recalled users beside all of them."""
    from bench.protocol.spec import EvalCase
    from bench.run.records import result_record
    from bench.stats.method_summary import method_metrics

    assert recall_set(tiny, *user_split(tiny, "u1", tiny.history("u1")), 2, {"1", "6", "3"}) == ["2", "5"]
    got = candidates_of(tiny, "u1")
    assert sorted(got.candidates) == ["2", "5"] and not got.recalled
    missed = EvalCase("u1", "4", got.candidates, got.recalled)
    found = EvalCase("u2", "6", ["2", "6"], True)
    records = [
        result_record("popularity", missed, {"ranking": got.candidates}, 0.0),
        result_record("popularity", found, {"ranking": ["6", "2"]}, 0.0),
    ]
    assert records[0]["rank"] is None and set(records[0]["metrics"].values()) == {0.0}
    assert [r["recalled"] for r in records] == [False, True]
    summary = method_metrics(records)
    assert summary["hit@1"] == 0.5 and summary["mrr"] == 0.5  # (0 + 1) / 2 over every user
    assert summary["on_recalled"]["hit@1"] == 1.0 and summary["on_recalled"]["users"] == 1


def test_retrieval_negatives_draws_beside_the_target_from_the_top_k(tiny: Environment) -> None:
    """u2 (query along axis 0): unseen 2, 4, 5, 6 score 1, 0, 0.8, 1, retrieved as 2, 6, 5, 4. With
    N = 2 the pool is the top max(K, 5N) = all four; the target 6 is always a candidate and its one
    negative is drawn (seeded) from 2, 5, 4, not always the most similar one."""
    negatives = set()
    for seed in range(12):
        got = candidates_of(tiny, "u2", 2, seed, "retrieval_negatives")
        assert "6" in got.candidates and len(set(got.candidates)) == 2 and got.recalled
        negatives |= set(got.candidates) - {"6"}
    assert negatives == {"2", "4", "5"}
    assert candidates_of(tiny, "u1", 2, 0, "retrieval_negatives").recalled is False  # top 2: 2, 5
    assert pool_size(10, 0) == 50 and pool_size(10, 80) == 80 and pool_size(10, 20) == 50


def test_recall_at_n_is_the_share_of_targets_the_retrieval_found(tiny: Environment, monkeypatch: Any) -> None:
    """recall@2 over u1 (missed) and u2 (found) is 1/2, in metrics.json's candidates block, from the
    flags the cases carry: the block reads no item vector (the retrieval does not run again)."""
    reads: list[int] = []
    matrix = tiny.item_vectors()
    monkeypatch.setattr(tiny, "item_vectors", lambda: reads.append(1) or matrix)
    protocol = Protocol(dataset=tiny.dataset.source, candidates=2, users=2, candidate_source="retrieval")
    cases = plan_cases_for(tiny, protocol, ["u1", "u2"])
    assert [case.recalled for case in cases] == [False, True] and reads
    planned = len(reads)
    block = candidates_block(tiny, protocol, cases)
    assert len(reads) == planned
    assert block["source"] == "retrieval" and block["recall@2"] == 0.5
    assert "50.0% (recall@2)" in describe_candidates(block)
    assert protocol.as_dict()["candidate_source"] == "retrieval"
    assert protocol.as_dict()["missed_target"] == "scores 0"  # a log of the old swap-in rule differs
    assert "candidate_source" not in Protocol(dataset="x").as_dict()  # old logs still resume


@pytest.mark.parametrize(
    ("source", "pool", "message"),
    [
        ("retrieval_negatives", -1, "--retrieval-pool must be 0 (5N) or more, got -1"),
        ("retrieval", 100, "--retrieval-pool applies to --candidate-source retrieval_negatives only"),
        ("auto", 100, "--retrieval-pool applies to --candidate-source retrieval_negatives only"),
    ],
)
def test_a_pool_size_that_cannot_apply_is_refused_in_one_line(
    tiny: Environment, source: str, pool: int, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from recgraph.cli import main

    argv = ["bench", "--methods", "popularity", "--dataset", tiny.dataset.source, "--users", "2",
            "--candidates", "2", "--candidate-source", source, "--retrieval-pool", str(pool)]  # fmt: skip
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(message)


def test_every_negatives_case_holds_the_target_and_the_order_is_seeded(tiny: Environment) -> None:
    protocol = Protocol(
        dataset=tiny.dataset.source, candidates=3, users=2, candidate_source="retrieval_negatives"
    )
    cases = plan_cases_for(tiny, protocol, ["u1", "u2"])
    for case in cases:
        assert case.target in case.candidates and len(set(case.candidates)) == 3
        assert not (tiny.interacted(case.user_id) - {case.target}) & set(case.candidates)
    assert cases == plan_cases_for(tiny, protocol, ["u1", "u2"])
    orders = {tuple(candidates_of(tiny, "u2", 3, seed).candidates) for seed in range(8)}
    assert len(orders) > 1  # shuffled by the seed, not left in retrieval order


def test_the_query_reads_only_what_the_scenario_shows() -> None:
    """cold_user shows a user's last 3 items: changing the vectors of the hidden older history moves
    nothing, while under classic (where they are visible) it does."""
    env = get_environment("ml-100k")
    user = "1"
    target = env.cases[user].target.item_id
    visible = set(env.history(user, "cold_user"))
    hidden = [i for i in env.history(user) if i not in visible]
    rng = np.random.default_rng(0)
    base = rng.normal(size=(len(env.item_ids), 8))
    moved = base.copy()
    for item in hidden:
        moved[env.item_index[item]] = rng.normal(size=8) * 5

    def draw(vectors: np.ndarray, scenario: str) -> list[str]:
        normalised = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        env.item_vectors = lambda: normalised  # type: ignore[method-assign]
        try:
            return retrieval_candidates(
                env, user_id=user, target=target, n=10, history=env.history(user, scenario),
                interacted=env.interacted(user) - {target}, seed=0,
            ).candidates  # fmt: skip
        finally:
            del env.item_vectors

    assert draw(base, "cold_user") == draw(moved, "cold_user")
    assert draw(base, "classic") != draw(moved, "classic")


def test_plan_cases_ignores_pools_and_keeps_every_user(tiny: Environment) -> None:
    protocol = Protocol(dataset=tiny.dataset.source, candidates=2, users=10, candidate_source="retrieval")
    users = [case.user_id for case in plan_cases(tiny, protocol)]
    assert users == ["u1", "u2", "u3"]


def test_every_retrieve_mode_goes_through_the_one_recall_stage(tiny: Environment) -> None:
    """ARAG's retrieve mode, the other methods' (`retrieve_candidates`) and the benchmark's source
    search the same way: for u1's history (1, 6, 3) the unseen 2, 4, 5 score 1, 0, 0.8."""
    from agents.arag.recall import recall_from_catalog
    from state.arag.context import AragContext

    history = tiny.history("u1")
    ctx = AragContext(dataset=tiny.dataset.source)
    assert recall_from_catalog(tiny, ctx, "u1", history, 2) == ["2", "5"]
    assert retrieve_candidates(tiny, history, 2) == retrieve_candidates(tiny, history, 2, "u1") == ["2", "5"]
    assert recall_set(tiny, *user_split(tiny, "u1", history), 2, set(history)) == ["2", "5"]


@pytest.mark.parametrize("method", ["vanilla_llm", "chainrec"])
def test_retrieve_mode_splits_the_session_by_time_like_arag(method: str) -> None:
    """ml-100k user 10's last session (24 h gap) is shorter than the last 5 items, so a retrieve
    mode that split by position would recall 9 of its 10 items differently."""
    from graphs.registry import get_graph
    from state.context import Context

    env = get_environment("ml-100k")
    history = env.history("10")
    by_time = retrieve_candidates(env, history, 10, "10")
    assert by_time != retrieve_candidates(env, history, 10)  # the two splits recall differently here
    output = get_graph(method).invoke({"user_id": "10", "retrieve_mode": True}, context=Context(top_k=10))
    assert sorted(output["ranking"]) == sorted(by_time)
