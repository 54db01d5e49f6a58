"""The shared RecInput/RecOutput contract, inherited by every graph."""

from dataclasses import fields

import pytest

from graphs.registry import METHODS, get_graph, parse_methods
from state.context import Context
from state.contract import InvalidRecInput
from tests.baselines.test_trained import SMALL
from world.errors import RecgraphError

CANDIDATES = ["50", "181", "1", "2", "3", "100"]


@pytest.mark.parametrize("method", [name for name, spec in METHODS.items() if not spec.trained_state])
def test_ranking_is_a_permutation_of_the_candidates(method: str) -> None:
    # Small trained baselines (SASRec, GRU4Rec, LightGCN, and the router's tools that read them):
    # the contract does not depend on their size, and full-size ones take a minute each to train.
    knobs = {f.name for f in fields(METHODS[method].context)}
    context = METHODS[method].context(**{k: v for k, v in SMALL.items() if k in knobs})
    output = get_graph(method).invoke({"user_id": "1", "candidates": CANDIDATES}, context=context)
    assert sorted(output["ranking"]) == sorted(CANDIDATES)
    if METHODS[method].kind == "classic":
        assert set(output["scores"]) == set(CANDIDATES)
        assert [m["role"] for m in output["trace"]] == ["validate_input", f"{method}_ranker"]
    else:  # heuristic backend: every agent's fallback answered, and says so
        assert output["usage"] and all(u["source"] == "heuristic" for u in output["usage"])
        assert sum(u["calls"] for u in output["usage"]) == 0
        assert output["trace"][0]["role"] == "validate_input" and len(output["trace"]) >= 2
    assert {"id", "role", "content", "score", "timestamp"} <= set(output["trace"][0])


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"user_id": "99999", "candidates": ["1", "2"]}, "unknown user id '99999'"),
        ({"user_id": "1", "candidates": []}, "candidates: candidates is an empty list"),
        ({"user_id": "1", "candidates": ["5", "7", "5"]}, "duplicate candidate item id '5'"),
        ({"user_id": "1", "candidates": ["1", "no-such-item"]}, "unknown item id 'no-such-item'"),
    ],
)
def test_bad_input_raises_one_clear_error(method: str, request_: dict, message: str) -> None:
    with pytest.raises(InvalidRecInput) as error:
        get_graph(method).invoke(request_)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


@pytest.mark.parametrize("method", [name for name, spec in METHODS.items() if spec.trained_state])
def test_a_method_without_its_trained_state_refuses_in_one_line(method: str, tmp_path) -> None:
    """Without what it was trained on, a method names what is missing instead of ranking with
    something else under its name (its ranking with the state is tested in its room)."""
    context = METHODS[method].context(chainrec_checkpoint=str(tmp_path / "none"))
    with pytest.raises(RecgraphError) as refused:
        get_graph(method).invoke({"user_id": "1", "candidates": CANDIDATES}, context=context)
    assert (
        str(refused.value)
        == f"chainrec_checkpoint '{tmp_path / 'none'}' holds no trained planner (config.json)"
    )


def test_integer_ids_are_accepted() -> None:
    output = get_graph("popularity").invoke({"user_id": 1, "candidates": [1, 50]})
    assert output["ranking"] == ["50", "1"]


def test_retrieve_mode_returns_top_k_unseen_items() -> None:
    output = get_graph("itemknn").invoke({"user_id": "1"}, context=Context(top_k=7))
    from world.environment import get_environment

    history = set(get_environment("ml-100k").history("1"))
    assert len(output["ranking"]) == 7
    assert not history & set(output["ranking"])
    scores = [output["scores"][i] for i in output["ranking"]]
    assert scores == sorted(scores, reverse=True)


def test_parse_methods() -> None:
    assert parse_methods("all") == list(METHODS)
    assert parse_methods("bpr, random,bpr") == ["bpr", "random"]
    with pytest.raises(Exception, match="unknown method 'arag2'"):
        parse_methods("random,arag2")
