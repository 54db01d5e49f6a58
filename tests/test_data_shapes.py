"""Every registered method on the shapes real catalogs have: titles only, order only, and both.

Each method (prepared by its own `prepare` hook when it declares one, as the benchmark does) ranks
a few users; the ranking is a permutation of exactly the candidates, and `degraded` names each
feature switched off for a missing field, with the same words posted to the blackboard. A bench
run with `--methods all` on the titles-only fixture completes and lists them in metrics.json.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphs.hooks import PrepareRequest
from graphs.registry import METHODS, get_graph, hook, method_context
from recgraph.cli import main
from state.context import Context
from world.datasets import load_dataset
from world.shape import present_fields

SHAPES = ("titles_only", "order_only", "titles_and_order")
"""The degraded shapes every registered method must handle (the `write_shape` fixture's catalogs)."""
USERS = ["a", "b"]
NO_CATEGORIES = "no item categories"
NO_TIME = "no timestamps (interaction order only)"
EXPECTED = {
    # (method family, shape) -> entries that must be listed
    ("memrec", "titles_only"): [
        f"category_facets: {NO_CATEGORIES}",
        f"metadata_overlap_score: {NO_CATEGORIES}",
    ],
    ("memrec", "order_only"): [f"recency_days: {NO_TIME}"],
    ("amem4rec", "titles_only"): [f"category_patterns: {NO_CATEGORIES}", "release_era: no item years"],
    ("chainrec", "titles_only"): [
        f"category_distributions: {NO_CATEGORIES}",
        "PositivePreference: no ratings",
    ],
    ("chainrec", "order_only"): [f"dated_recency_window: {NO_TIME}"],
    ("arag", "titles_only"): [f"category_weights: {NO_CATEGORIES}"],
}
ABSENT = {
    # entries that must NOT be listed: the field is there
    ("memrec", "order_only"): ["category_facets", "metadata_overlap_score"],
    ("memrec", "titles_only"): ["recency_days"],
    ("amem4rec", "order_only"): ["category_patterns", "release_era"],
    ("chainrec", "order_only"): ["category_distributions"],
    ("chainrec", "titles_only"): ["dated_recency_window"],
}


def family(method: str) -> str:
    return next((f for f in ("memrec", "amem4rec", "chainrec", "arag") if method.startswith(f)), method)


def expected_for(method: str, shape: str) -> tuple[list[str], list[str]]:
    """What `method` must and must not list on `shape` (titles_and_order: the union of both)."""
    shapes = ("titles_only", "order_only") if shape == "titles_and_order" else (shape,)
    must = [e for s in shapes for e in EXPECTED.get((family(method), s), [])]
    absent = [] if shape == "titles_and_order" else ABSENT.get((family(method), shape), [])
    if method == "memrec_no_read":  # reads no neighbours: curation features are not computed
        must = [e for e in must if e.startswith("category_facets")]
    return must, absent


@pytest.fixture(scope="module")
def shape_dirs(tmp_path_factory: pytest.TempPathFactory, write_shape: Callable[..., Path]) -> dict[str, str]:
    root = tmp_path_factory.mktemp("shapes")
    return {shape: str(write_shape(root / shape, shape)) for shape in SHAPES}


def test_fixtures_have_the_shapes_they_claim(shape_dirs: dict[str, str]) -> None:
    titles = present_fields(load_dataset(shape_dirs["titles_only"]))
    order = present_fields(load_dataset(shape_dirs["order_only"]))
    both = present_fields(load_dataset(shape_dirs["titles_and_order"]))
    assert titles == {"timestamps"}
    assert order == {"categories", "years"}
    assert both == frozenset()
    item = load_dataset(shape_dirs["titles_only"]).items
    assert item["6"].title == "Paper Hearts & Stars" and item["13"].title == "Captain's Log"


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("shape", SHAPES)
def test_every_method_ranks_every_shape(
    shape: str,
    method: str,
    shape_dirs: dict[str, str],
    shape_candidates: dict[str, list[str]],
    tmp_path: Path,
) -> None:
    data = shape_dirs[shape]
    ctx = method_context(method, Context(dataset=data))
    prepare = hook(method, "prepare")
    if prepare is not None:
        protocol = {"dataset": data, "candidates": 5, "seed": 0, "scenario": "classic", "users": 2}
        request = PrepareRequest(
            method=method,
            users=USERS,
            scenario="classic",
            protocol={**protocol, "llm": "heuristic"},
            work_dir=tmp_path,
            concurrency=2,
            context=ctx,
        )
        ctx = prepare(request).context
    graph = get_graph(method)
    must, absent = expected_for(method, shape)
    for user in USERS:
        out = graph.invoke({"user_id": user, "candidates": shape_candidates[user]}, context=ctx)
        assert sorted(out["ranking"]) == sorted(shape_candidates[user])
        degraded = out.get("degraded") or []
        for entry in must:
            assert entry in degraded, (method, shape, degraded)
        for feature in absent:
            assert not any(e.startswith(f"{feature}:") for e in degraded), (method, shape, degraded)
        posted = " ".join(m["content"] for m in out["trace"] if m["content"].startswith("switched off: "))
        assert all(entry in posted for entry in degraded)
        assert len(degraded) == len(set(degraded))


def test_bench_all_methods_on_titles_only_lists_what_was_switched_off(
    shape_dirs: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    args = ["bench", "--methods", "all", "--dataset", shape_dirs["titles_only"], "--users", "2"]
    assert main([*args, "--candidates", "5", "--seed", "0", "--concurrency", "2", "--out", str(out)]) == 0
    methods = json.loads((out / "metrics.json").read_text())["methods"]
    assert set(methods) == set(METHODS)
    assert f"category_facets: {NO_CATEGORIES}" in methods["memrec"]["degraded"]
    assert f"category_patterns: {NO_CATEGORIES}" in methods["amem4rec"]["degraded"]
    assert f"category_distributions: {NO_CATEGORIES}" in methods["chainrec"]["degraded"]
    assert "degraded" not in methods["itemknn"] and "degraded" not in methods["popularity"]
    report = (out / "report.md").read_text()
    assert f"- memrec: metadata_overlap_score: {NO_CATEGORIES}; category_facets: {NO_CATEGORIES}" in report
    assert "- itemknn:" not in report
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()[1:]]
    memrec = [r for r in records if r.get("method") == "memrec"]
    assert memrec and all(f"category_facets: {NO_CATEGORIES}" in r["degraded"] for r in memrec)


def test_metrics_come_in_numeric_order_from_a_resumed_log() -> None:
    from bench.protocol.metrics import mean_metrics, user_metrics

    stored = dict(sorted(user_metrics(4, 20).items()))  # results.jsonl keeps keys sorted as text
    assert list(stored)[:3] == ["avg_hr", "hit@1", "hit@10"]
    assert list(mean_metrics([stored])) == [
        "hit@1",
        "hit@3",
        "hit@5",
        "hit@10",
        "ndcg@3",
        "ndcg@5",
        "ndcg@10",
        "mrr",
        "avg_hr",
    ]


def test_evolving_scenarios_on_order_only_data_are_refused_in_one_line(shape_dirs: dict[str, str]) -> None:
    from world.errors import ProtocolError
    from world.scenarios import check_scenario

    has_time = load_dataset(shape_dirs["order_only"]).has_time
    refused = r"keeps the 90 days before the target.*only has interaction order"
    with pytest.raises(ProtocolError, match=refused):
        check_scenario("evolving_long", has_time)
    check_scenario("cold_user", has_time)


def test_memrec_facets_on_a_titles_only_catalog_are_the_best_supported_titles(
    shape_dirs: dict[str, str],
    shape_candidates: dict[str, list[str]],
    final_state: Callable[..., dict[str, Any]],
) -> None:
    from graphs.memrec.graph import graph as memrec

    data = shape_dirs["titles_only"]
    ctx = method_context("memrec_no_write", Context(dataset=data))
    final = final_state(memrec, {"user_id": "a", "candidates": shape_candidates["a"]}, ctx)
    items = load_dataset(data).items
    weights: dict[str, float] = {}
    for record in final["curated"]:
        if record["kind"] == "item":
            weights[record["id"]] = max(record["score"], 0.0)
    total = sum(weights.values())
    best = sorted(weights, key=lambda node: -weights[node])[: ctx.memrec_facets]
    facets = final["facets"]
    assert [f["supporting_neighbors"] for f in facets] == [[node] for node in best]
    for facet, node in zip(facets, best, strict=True):
        assert facet["facet"].startswith(f'like "{items[node[2:]].title}"')
        assert facet["confidence"] == pytest.approx(weights[node] / total, abs=1e-4)
    why = final["rationales"][final["ranking"][0]]
    assert "facet 0.00" not in why  # the title facets reach ReRank through MiniLM similarity
