"""MemRec curation rules: the interpreter against hand-computed values, validation, shipped rule sets."""

from __future__ import annotations

import json
import math
import timeit
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agents.memrec.rule_files import load_rule_set, rule_set_schema, shipped_rule_sets
from agents.memrec.rule_scoring import score_neighbour, score_neighbours
from agents.memrec.rules import FEATURES, RuleSetError
from agents.memrec.statistics import domain_statistics
from world.environment import get_environment


def features(
    ew: float = 0.0, days: float = 0.0, co: float = 0.0, meta: float = 0.0, sim: float = 0.0
) -> dict:
    """The five features by keyword."""
    return dict(zip(FEATURES, (ew, days, co, meta, sim), strict=True))


def one_rule(
    *effects: dict, when: list | None = None, base_terms: list | None = None, kind: str = "any"
) -> Any:
    """A rule set holding one rule with the given effects."""
    rule = {"id": "r", "name": "R", "effects": list(effects), "when": when or [], "kind": kind}
    return load_rule_set({"name": "t", "domain": "test", "base_terms": base_terms or [], "rules": [rule]})


def both(rule_set: Any, feats: dict, kind: str = "user", base: float = 1.0) -> float:
    """Score with the scalar and the vectorised interpreter; they must agree."""
    scalar = score_neighbour(rule_set, feats, kind, base)
    vector = score_neighbours(rule_set, np.array([[feats[f] for f in FEATURES]]), [kind], base)
    assert vector[0] == pytest.approx(scalar, rel=1e-12)
    return scalar


def test_multiplier_fires_only_when_its_condition_holds() -> None:
    rs = one_rule(
        {"type": "multiplier", "value": 2.5},
        when=[{"feature": "co_interaction_count", "op": ">", "value": 3}],
    )
    assert both(rs, features(co=4)) == pytest.approx(2.5)
    assert both(rs, features(co=3)) == pytest.approx(1.0)
    assert both(rs, features(co=4), base=2.0) == pytest.approx(5.0)


def test_linear_multiplier_and_additive_boost() -> None:
    scale = one_rule({"type": "multiplier", "value": 1.0, "feature": "memory_similarity_score", "coef": 1.2})
    assert both(scale, features(sim=0.5)) == pytest.approx(1.6)
    boost = one_rule({"type": "boost", "value": 0.5, "feature": "memory_similarity_score", "coef": 2.0})
    assert both(boost, features(sim=0.25)) == pytest.approx(1.0 + 0.5 + 0.5)


def test_exponential_decay_by_half_life_and_by_rate() -> None:
    half = one_rule({"type": "decay", "feature": "recency_days", "half_life": 10.0})
    assert both(half, features(days=10)) == pytest.approx(0.5)
    assert both(half, features(days=20)) == pytest.approx(0.25)
    assert both(half, features(days=0)) == pytest.approx(1.0)
    rate = one_rule({"type": "decay", "feature": "recency_days", "rate": 0.004})
    assert both(rate, features(days=250)) == pytest.approx(math.exp(-1.0))


def test_penalty_and_effect_level_conditions() -> None:
    rs = one_rule(
        {"type": "penalty", "value": 0.3, "when": [{"feature": "recency_days", "op": ">", "value": 365}]},
        {"type": "multiplier", "value": 2.0, "when": [{"feature": "recency_days", "op": "<=", "value": 30}]},
    )
    assert both(rs, features(days=400)) == pytest.approx(0.3)
    assert both(rs, features(days=365)) == pytest.approx(1.0)
    assert both(rs, features(days=30)) == pytest.approx(2.0)


def test_term_multiplier_scales_only_its_base_term() -> None:
    terms = [
        {"feature": "edge_weight", "weight": 2.0},
        {"feature": "co_interaction_count", "weight": 1.0, "transform": "log1p"},
    ]
    rs = one_rule({"type": "multiplier", "target": "edge_weight", "value": 3.0}, base_terms=terms)
    # base 1 + 2 * 3 * 0.5 + log1p(4)
    assert both(rs, features(ew=0.5, co=4)) == pytest.approx(1 + 3.0 + math.log(5))


def test_kind_conditions() -> None:
    rs = one_rule(
        {"type": "multiplier", "kind": "item", "value": 2.0},
        {"type": "multiplier", "kind": "user", "value": 3.0},
    )
    assert both(rs, features(), kind="item") == pytest.approx(2.0)
    assert both(rs, features(), kind="user") == pytest.approx(3.0)
    user_rule = one_rule({"type": "multiplier", "kind": "item", "value": 2.0}, kind="user")
    assert both(user_rule, features(), kind="item") == both(user_rule, features(), kind="user") == 1.0


def test_books_rules_by_hand() -> None:
    books = load_rule_set("books")
    f = features(ew=0.5, days=200, co=5, meta=0.7, sim=0.6)
    base = 1 + 0.5 * 1.8 + 0.25 * math.log(6) + 0.7 + 0.6
    factor = 2.5 * 1.5 * math.exp(-0.004 * 200)
    assert both(books, f, kind="item") == pytest.approx(base * factor * (1 + 1.2 * 0.6))
    assert both(books, f, kind="user") == pytest.approx(base * factor * (1 + 0.8 * 0.6))


def test_movietv_and_yelp_recency_by_hand() -> None:
    movietv, yelp = load_rule_set("movietv"), load_rule_set("yelp")
    # co=0 < 3 triggers metadata compensation, which with meta=0 changes nothing.
    assert both(movietv, features(days=100)) == pytest.approx(math.exp(-0.018 * 100))
    assert both(movietv, features(days=400)) == pytest.approx(math.exp(-0.025 * 400) * 0.3)
    # meta=0.5 avoids yelp's category filter; co=0 halves edge_weight (0 here).
    assert both(yelp, features(days=200, meta=0.5)) == pytest.approx((1 + 0.5) * math.exp(-0.028 * 200) * 0.5)


@pytest.mark.parametrize("name", ["books", "generic", "goodreads", "movietv", "yelp"])
def test_scalar_equals_vectorised_on_random_and_boundary_rows(name: str) -> None:
    rs = load_rule_set(name)
    rng = np.random.default_rng(7)
    x = rng.random((500, 5)) * [2.0, 500.0, 20.0, 1.0, 1.0]
    x[:40, 1] = [60, 90, 180, 365] * 10  # exact thresholds
    x[40:80, 2] = [2, 3, 10, 15] * 10
    x[80:120, 3] = [0.4, 0.6, 0.7, 0.85] * 10
    kinds = np.where(rng.random(500) < 0.5, "user", "item")
    vector = score_neighbours(rs, x, kinds)
    scalar = [
        score_neighbour(rs, dict(zip(FEATURES, row, strict=True)), k) for row, k in zip(x, kinds, strict=True)
    ]
    np.testing.assert_allclose(vector, scalar, rtol=1e-12)
    np.testing.assert_allclose(score_neighbours(rs, x, kinds == "item"), vector)


def test_every_shipped_rule_set_validates_and_cites_its_source() -> None:
    names = shipped_rule_sets()
    assert names == ["books", "generic", "goodreads", "movietv", "yelp"]
    figures = {"books": "Figure 11", "goodreads": "Figure 11", "movietv": "Figure 12", "yelp": "Figure 12"}
    for name in names:
        rs = load_rule_set(name)
        assert rs.name == name and 3 <= len(rs.rules) <= 5
        assert figures.get(name, "w/o LLM curation") in rs.description
        assert load_rule_set(json.loads(rs.to_json())) == rs
    schema = rule_set_schema()
    assert "rules" in schema["properties"] and schema["$defs"]["Effect"]["properties"]["half_life"]


def test_rule_set_file_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(load_rule_set("yelp").to_json())
    assert load_rule_set(path) == load_rule_set("yelp")


def _set_with(bad_rule: dict, n_good: int = 1) -> dict:
    good = {"id": "ok", "name": "fine", "effects": [{"type": "multiplier", "value": 2.0}]}
    return {"name": "t", "domain": "d", "rules": [good] * n_good + [bad_rule]}


@pytest.mark.parametrize(
    ("rule", "fragment"),
    [
        (
            {
                "id": "bad",
                "name": "x",
                "when": [{"feature": "colour", "op": ">", "value": 1}],
                "effects": [{"type": "multiplier", "value": 2}],
            },
            "when[0].feature",
        ),
        (
            {
                "id": "bad",
                "name": "x",
                "when": [{"feature": "recency_days", "op": "=>", "value": 1}],
                "effects": [{"type": "multiplier", "value": 2}],
            },
            "when[0].op",
        ),
        (
            {
                "id": "bad",
                "name": "x",
                "effects": [{"type": "decay", "feature": "recency_days", "half_life": -3}],
            },
            "effects[0].half_life: Input should be greater than 0",
        ),
        ({"id": "bad", "name": "x"}, "effects: Field required"),
        ({"id": "bad", "name": "x", "effects": []}, "effects: List should have at least 1 item"),
        (
            {"id": "bad", "name": "x", "effects": [{"type": "penalty", "value": 1.5}]},
            "penalty value must be in",
        ),
        (
            {"id": "bad", "name": "x", "effects": [{"type": "decay", "feature": "recency_days"}]},
            "exactly one of",
        ),
        ({"id": "bad", "name": "x", "effects": [{"type": "multiplier"}]}, "needs a 'value'"),
        ({"id": "bad", "name": "x", "effects": [{"type": "shrink", "value": 2}]}, "effects[0].type"),
        (
            {
                "id": "bad",
                "name": "x",
                "effects": [{"type": "multiplier", "value": 2, "target": "edge_weight"}],
            },
            "not one of the base_terms",
        ),
        ({"id": "ok", "name": "x", "effects": [{"type": "multiplier", "value": 2}]}, "duplicate rule id"),
    ],
)
def test_invalid_rules_name_the_rule_and_the_problem(rule: dict, fragment: str) -> None:
    with pytest.raises(RuleSetError) as error:
        load_rule_set(_set_with(rule))
    message = str(error.value)
    assert f"rule {rule['id']!r} (index 1)" in message
    assert fragment in message


def test_rule_count_limits() -> None:
    good = {"id": "r", "name": "x", "effects": [{"type": "boost", "value": 1}]}
    too_many = {"name": "t", "domain": "d", "rules": [{**good, "id": f"r{i}"} for i in range(6)]}
    with pytest.raises(RuleSetError, match="1 to 5 rules, got 6"):
        load_rule_set(too_many)
    with pytest.raises(RuleSetError, match="1 to 5 rules, got 0"):
        load_rule_set({"name": "t", "domain": "d", "rules": []})


def test_bad_files_and_names(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(RuleSetError, match=r"broken\.json: not valid JSON"):
        load_rule_set(broken)
    with pytest.raises(RuleSetError, match="no rule set 'nowhere'"):
        load_rule_set("nowhere")
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(_set_with({"id": "z", "name": "x", "effects": [{"type": "penalty", "value": 2}]}))
    )
    with pytest.raises(RuleSetError, match=r"bad.json: rule 'z' \(index 1\)"):
        load_rule_set(bad)
    with pytest.raises(ValueError, match="n x 5"):
        score_neighbours(load_rule_set("books"), np.zeros((3, 4)), ["user"] * 3)


def test_domain_statistics_by_hand(tiny_dataset_dir: Path) -> None:
    stats = domain_statistics(get_environment(str(tiny_dataset_dir)))
    # training histories: u1 (1, 6), u2 (1), u3 (2, 4); u4 has too few interactions to split.
    assert stats["users"] == 4 and stats["items"] == 6 and stats["train_interactions"] == 5
    assert stats["interaction_density"] == pytest.approx(5 / 24)
    assert stats["category_distribution"] == {
        "Sci-Fi": 0.375,
        "Action": 0.25,
        "Comedy": 0.25,
        "Romance": 0.125,
    }
    assert stats["mean_history_length"] == pytest.approx(5 / 3) and stats["median_history_length"] == 2.0
    assert stats["time_span_days"] == pytest.approx(300 / 86400)
    assert stats["recency_days"] == "days between interaction timestamps"
    assert stats["unavailable_features"] == []


@pytest.mark.perf
def test_interpreter_speed_for_1000_neighbours() -> None:
    rng = np.random.default_rng(0)
    x = rng.random((1000, 5)) * [1.0, 400.0, 20.0, 1.0, 1.0]
    kinds = np.where(rng.random(1000) < 0.5, "user", "item")
    for name in shipped_rule_sets():
        rs = load_rule_set(name)
        best = min(timeit.repeat(lambda rs=rs: score_neighbours(rs, x, kinds), number=200, repeat=5)) / 200
        print(f"{name}: {best * 1e3:.3f} ms per 1,000 neighbours")
        assert best < 1e-3
