"""The router's comparison with the methods it routes between (bench/report/router_headroom.py), against
hand-computed values."""

from __future__ import annotations

import pytest

from bench.report.router_headroom import headroom_markdown, router_headroom


def _rows(values: dict[str, list[float]]) -> dict[str, dict[str, dict[str, float]]]:
    """method -> [ndcg@5 per user u1, u2, …] as per-user metric rows (avg_hr = ndcg@5 / 2)."""
    return {
        method: {f"u{i + 1}": {"ndcg@5": v, "avg_hr": v / 2} for i, v in enumerate(series)}
        for method, series in values.items()
    }


def test_best_single_oracle_and_headroom_share() -> None:
    rows = _rows(
        {
            "popularity": [0.2, 0.2, 0.2],  # a single method the router cannot call
            "itemknn": [1.0, 0.0, 0.5],  # mean 0.5, first in run order
            "memrec": [0.0, 1.0, 0.5],  # mean 0.5: the tie goes to itemknn
            "router_learned": [1.0, 1.0, 0.5],
        }
    )
    block = router_headroom(rows)
    assert block is not None
    assert block["users"] == 3
    assert block["best_single"] == {"method": "itemknn", "ndcg@5": 0.5, "avg_hr": 0.25}
    assert list(block["callable_methods"]) == ["itemknn", "memrec"]
    # Per user, the best of itemknn and memrec: 1, 1, 0.5.
    assert block["oracle"] == pytest.approx(2.5 / 3)
    router = block["routers"]["router_learned"]
    assert router["ndcg@5"] == pytest.approx(2.5 / 3)
    # (0.8333 − 0.5) / (0.8333 − 0.5): the router reaches the oracle.
    assert router["headroom_share"] == pytest.approx(1.0)
    assert router["vs_best_single"]["difference"] == pytest.approx(1 / 3)
    assert router["vs_best_single"]["users"] == 3


def test_users_missing_from_a_method_are_left_out_and_no_headroom_is_none() -> None:
    rows = _rows({"itemknn": [1.0, 0.0, 1.0], "router_fixed": [0.0, 0.0, 1.0]})
    del rows["itemknn"]["u3"]
    block = router_headroom(rows)
    assert block is not None and block["users"] == 2
    assert block["oracle"] == pytest.approx(0.5)  # itemknn alone: no headroom over itself
    assert block["routers"]["router_fixed"]["headroom_share"] is None
    assert block["routers"]["router_fixed"]["vs_best_single"]["difference"] == pytest.approx(-0.5)
    assert "| router_fixed | 0.0000 | -0.5000 ≈ |" in headroom_markdown(block)


def test_no_block_without_a_router_or_without_another_method() -> None:
    assert router_headroom(_rows({"itemknn": [1.0], "memrec": [0.0]})) is None
    assert router_headroom(_rows({"router": [1.0]})) is None
    assert headroom_markdown(None) == ""


def test_metrics_json_and_report_md_carry_the_block(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from bench.report import outputs as report

    rows = _rows({"itemknn": [1.0, 0.0], "memrec": [0.0, 1.0], "router_learned": [1.0, 1.0]})
    block = router_headroom(rows)
    protocol = {"candidates": 10, "seed": 0, "scenario": "classic", "users": 2, "llm": "heuristic"}
    methods = {m: {"ndcg@5": sum(r["ndcg@5"] for r in u.values()) / 2, "users": 2} for m, u in rows.items()}
    document = json.loads(
        report.write_metrics(tmp_path, "ml-100k", protocol, methods, router_headroom=block).read_text()
    )
    assert document["router_headroom"]["best_single"]["method"] == "itemknn"
    assert document["router_headroom"]["routers"]["router_learned"]["headroom_share"] == pytest.approx(1.0)
    text = report.write_report_md(tmp_path, "ml-100k", protocol, methods, router_headroom=block).read_text()
    assert "## Router against the methods it routes between" in text
    assert "| router_learned | 1.0000 | +0.5000 ≈ |" in text
    assert "router_headroom" not in json.loads(
        report.write_metrics(tmp_path, "ml-100k", protocol, methods).read_text()
    )


def test_trained_baselines_are_in_the_callable_oracle_and_the_llm_rankers_are_not() -> None:
    """SASRec, GRU4Rec, LightGCN, AgentCF and LLMRank's recency prompt are router tools
    (SequentialSignal, GraphSignal, AgentMemories, RecencyRanking): the callable oracle takes them in.
    LLMRank's other two prompts compete for best single, but no router tool runs them: only the
    oracle over every single method takes them in (values by hand)."""
    rows = _rows(
        {
            "itemknn": [1.0, 0.0, 0.0, 0.5],  # mean 0.375
            "memrec": [0.0, 0.5, 0.0, 0.5],  # mean 0.25
            "sasrec": [1.0, 0.5, 0.5, 0.5],  # mean 0.625: the best single
            "gru4rec": [0.5, 0.5, 0.5, 0.5],
            "lightgcn": [0.0, 0.0, 1.0, 0.0],
            "llmrank_sequential": [0.0, 0.0, 0.0, 1.0],
            "llmrank_recency": [0.0, 0.0, 0.0, 0.0],
            "llmrank_icl": [0.0, 1.0, 0.0, 0.0],
            "agentcf": [0.0, 0.0, 0.0, 0.0],
            "router_learned": [1.0, 0.5, 0.0, 0.5],  # mean 0.5
        }
    )
    block = router_headroom(rows)
    assert block is not None
    assert block["best_single"]["method"] == "sasrec" and block["best_single"]["ndcg@5"] == 0.625
    callable_ = ["itemknn", "memrec", "sasrec", "gru4rec", "lightgcn", "llmrank_recency", "agentcf"]
    assert list(block["callable_methods"]) == callable_
    new = ["llmrank_sequential", "llmrank_icl"]
    assert block["not_callable"] == new
    # the best callable per user (llmrank_recency and agentcf add nothing here): 1.0, 0.5, 1.0, 0.5
    assert block["oracle"] == pytest.approx((1.0 + 0.5 + 1.0 + 0.5) / 4)
    assert block["oracle_all_singles"] == pytest.approx(1.0)  # every user has a 1.0 somewhere
    router = block["routers"]["router_learned"]
    # The callable oracle (0.75) is above the best single (0.625): the router (0.5) captures none.
    assert router["headroom_share"] == pytest.approx((0.5 - 0.625) / (0.75 - 0.625))
    assert router["vs_best_single"]["difference"] == pytest.approx(-0.125)
    text = headroom_markdown(block)
    assert f"Compared with, but no router tool runs them: {', '.join(new)}" in text
    assert "per-user oracle over every single method: 1.0000." in text


def test_the_methods_with_a_router_tool_are_callable_and_the_rest_are_not() -> None:
    from agents.router.catalog import METHOD_FETCH
    from bench.report.router_headroom import CALLABLE, router_methods
    from graphs.registry import METHODS

    new = ["llmrank_sequential", "llmrank_icl"]
    trained = {
        "sasrec": "SequentialSignal", "gru4rec": "SequentialSignal", "lightgcn": "GraphSignal",
        "agentcf": "AgentMemories", "llmrank_recency": "RecencyRanking",
    }  # fmt: skip
    assert all(name in METHODS for name in [*new, *trained])
    assert router_methods([*new, *trained, "router_learned"]) == ["router_learned"]  # singles, never routers
    assert not set(new) & set(CALLABLE) and set(CALLABLE) <= set(METHODS)
    assert {m: CALLABLE[m] for m in trained} == trained and set(trained.values()) <= set(METHOD_FETCH)
