"""The environment as LangChain tools: what get_user / get_item / get_reviews show an episode (never the
held-out target, nothing after the target time), orders, budgets, and ratings-only datasets."""

from __future__ import annotations

import pytest
from langchain_core.tools import ToolException

from tools.chainrec.episode_tools import (
    ENVIRONMENT_TOOLS,
    EpisodeScope,
    call,
    get_item,
    get_reviews,
    get_user,
)
from world.environment import get_environment


def scope(dataset: str, user: str = "u1", scenario: str = "classic") -> EpisodeScope:
    return EpisodeScope(get_environment(dataset), user, scenario)


def test_models_see_typed_arguments_without_the_episode_scope() -> None:
    shown = {
        tool.name: set(tool.tool_call_schema.model_json_schema()["properties"]) for tool in ENVIRONMENT_TOOLS
    }
    assert shown == {
        "get_user": {"user_id", "limit"},
        "get_item": {"item_ids"},
        "get_reviews": {"user_id", "item_id", "order", "limit", "max_chars"},
    }


def test_langchain_invoke_and_the_agents_call_agree(books: str) -> None:
    here = scope(books)
    assert get_user.invoke({"user_id": "u1", "limit": 3, "scope": here}) == call(
        get_user, here, user_id="u1", limit=3
    )
    assert get_item.invoke({"item_ids": ["b3"], "scope": here}) == call(get_item, here, item_ids=["b3"])
    with pytest.raises(ValueError, match="limit"):
        call(get_user, here, user_id="u1", limit=0)  # typed arguments are checked on both paths


def test_get_user_shows_what_the_scenario_shows_and_never_the_target(books: str) -> None:
    user = call(get_user, scope(books), user_id="u1")
    assert [r["item_id"] for r in user["interactions"]] == ["b2", "b5", "b4", "b6", "b1"]  # b3 held out
    assert user["interactions"][0] == {
        "item_id": "b2",
        "title": "Dune Messiah",
        "categories": ["Sci-Fi"],
        "rating": 5.0,
        "date": "2020-04-01",
        "reviewed": True,
    }
    assert user["total"] == 5 and user["attributes"] == {"name": "U1"}
    cold = call(get_user, scope(books, scenario="cold_user"), user_id="u1")
    assert [r["item_id"] for r in cold["interactions"]] == ["b2", "b5", "b4"]
    window = call(get_user, scope(books, scenario="evolving_long"), user_id="u1", limit=2)
    assert [r["item_id"] for r in window["interactions"]] == ["b2", "b5"] and window["total"] == 3
    # Another user, from u1's episode: their training history before u1's target time, neither their
    # target (b9) nor their validation interaction (b8).
    other = call(get_user, scope(books), user_id="u2")
    assert [r["item_id"] for r in other["interactions"]] == ["b7", "b3", "b11"]
    late = call(get_user, scope(books), user_id="u4")  # everything u4 did is after 2020-05-01
    assert late["interactions"] == [] and late["total"] == 0


def test_get_item_counts_only_what_the_episode_may_see(books: str) -> None:
    records = {
        r["item_id"]: r for r in call(get_item, scope(books), item_ids=["b3", "b9", "b1", "b7"])["items"]
    }
    assert (records["b3"]["interactions"], records["b3"]["mean_rating"]) == (
        2,
        4.5,
    )  # u2, u3; u1's is held out
    assert (records["b9"]["interactions"], records["b9"]["mean_rating"]) == (0, None)  # u2's target
    assert (records["b1"]["interactions"], records["b1"]["mean_rating"]) == (
        1,
        3.0,
    )  # u1's own is not counted
    assert records["b7"]["interactions"] == 1  # u4's review comes after u1's target time
    assert records["b7"]["attributes"]["author"] == "William Gibson"
    assert (
        records["b7"]["attributes"]["is_open"] == "false"
        and records["b1"]["attributes"]["latitude"] == "32.22"
    )
    assert records["b3"]["categories"] == ["Sci-Fi"] and records["b3"]["reviews"] == 2
    u4_view = call(get_item, scope(books, user="u4"), item_ids=["b7"])["items"][0]
    assert u4_view["interactions"] == 1 and u4_view["mean_rating"] == 5.0  # u2's; u4's own excluded


def test_get_reviews_orders_and_budget(books: str) -> None:
    here = scope(books)
    recent = call(get_reviews, here, item_id="b3")
    assert [r["user_id"] for r in recent["reviews"]] == ["u2", "u3"] and recent["total"] == 2
    assert recent["reviews"][0] == {
        "user_id": "u2",
        "item_id": "b3",
        "rating": 4.0,
        "date": "2019-06-01",
        "text": "A darker sequel.",
    }
    helpful = call(get_reviews, here, item_id="b3", order="helpful")
    assert [r["user_id"] for r in helpful["reviews"]] == ["u3", "u2"]
    cut = call(get_reviews, here, item_id="b3", order="helpful", max_chars=40)
    assert len(cut["reviews"]) == 1 and cut["truncated"]
    assert cut["reviews"][0]["text"] == "An even stranger and more ambitious con…"
    assert call(get_reviews, here, item_id="b7")["total"] == 1  # u4's later review is hidden
    own = call(get_reviews, here, user_id="u1", limit=2)
    assert [r["item_id"] for r in own["reviews"]] == ["b2", "b5"] and own["total"] == 5
    assert "note" not in own and not own["truncated"]


def test_ratings_only_datasets_say_so() -> None:
    ml = EpisodeScope(get_environment("ml-100k"), "1", "classic")
    found = call(get_reviews, ml, user_id="1", limit=2)
    assert found["note"] == "this dataset has ratings but no review text: ratings only"
    assert len(found["reviews"]) == 2 and all("text" not in r and r["rating"] for r in found["reviews"])
    visible = get_environment("ml-100k").history("1")
    assert found["total"] == len(visible)


def test_refused_calls_name_the_problem(books: str) -> None:
    with pytest.raises(ToolException, match="unknown item id 'nope'"):
        call(get_item, scope(books), item_ids=["b1", "nope"])
    with pytest.raises(ToolException, match="unknown user id 'ghost'"):
        call(get_user, scope(books), user_id="ghost")
    with pytest.raises(ToolException, match="exactly one of user_id and item_id"):
        call(get_reviews, scope(books), user_id="u1", item_id="b1")


def test_a_viewer_s_own_events_are_a_brute_force_scan_of_the_dataset() -> None:
    from tools.chainrec.episode_corpus import corpus_of
    from world.split import held_out_events

    env = get_environment("ml-100k")
    corpus = corpus_of(env)
    held = held_out_events(env.cases)
    for viewer in ("1", "13", "405"):
        expected: dict[str, list[object]] = {}
        for event in env.dataset.interactions:  # the file's order, held-out events left out
            if event.user_id == viewer and (viewer, event.item_id, event.timestamp) not in held:
                expected.setdefault(event.item_id, []).append(event)
        assert dict(corpus.own_on_item(viewer)) == expected and expected
        assert corpus.own_on_item(viewer) is corpus.own_on_item(viewer)  # built once per viewer
        item = next(iter(expected))
        count, _, _ = corpus.item_stats(item, viewer, None)
        others = [e for e in env.dataset.interactions if e.item_id == item and e.user_id != viewer]
        assert count == sum((e.user_id, e.item_id, e.timestamp) not in held for e in others)
