"""AgentCF's deterministic memories: terms, the heuristic reflections and the affinity, against
hand-worked examples."""

from __future__ import annotations

import math

import pytest

from agents.agentcf.memory import (
    INITIAL_USER_MEMORY,
    affinity,
    features,
    initial_item_memory,
    item_terms,
    reflect_items,
    reflect_user,
    split_terms,
    words,
)
from world.data import Item

DRAMA = Item("1", "Moonlight Harbor", ("Drama", "Romance"))
ACTION = Item("2", "Iron Comet", ("Action", "Sci-Fi"))
TITLED = Item("3", "The Quiet Orchard")


def test_terms_come_from_categories_or_else_titles() -> None:
    assert words("I like the 1994 Drama, and drama forever!") == ["drama", "forever"]
    assert features(DRAMA) == ["drama", "romance"]
    assert features(TITLED) == ["quiet", "orchard"]  # a titles-only catalog: the title's words
    assert initial_item_memory(DRAMA) == "Moonlight Harbor. About: drama, romance."
    assert initial_item_memory(TITLED) == "The Quiet Orchard."
    assert split_terms(INITIAL_USER_MEMORY) == ([], [])
    assert split_terms("Likes westerns; passed over by fans of opera") == (["westerns"], ["fans", "opera"])


def test_user_reflection_moves_terms_between_likes_and_dislikes() -> None:
    first = reflect_user(
        INITIAL_USER_MEMORY, (DRAMA, initial_item_memory(DRAMA)), (ACTION, initial_item_memory(ACTION)), 900
    )
    assert first == "I like items about: drama, romance. I dislike items about: action, sci-fi."
    # The user now chooses the action film over the drama: the newest likes come first, and a like
    # the new choice contradicts becomes a dislike.
    action, drama = (ACTION, initial_item_memory(ACTION)), (DRAMA, initial_item_memory(DRAMA))
    second = reflect_user(first, action, drama, 900)
    assert second == "I like items about: action, sci-fi. I dislike items about: drama, romance."
    assert reflect_user(first, (DRAMA, "x"), (ACTION, "y"), 30) == "I like items about: drama."


def test_item_reflection_records_the_user_group_on_both_items() -> None:
    user = "I like items about: comedy, western, drama, crime."
    chosen, rejected = reflect_items(
        user, (DRAMA, initial_item_memory(DRAMA)), (ACTION, initial_item_memory(ACTION)), 400
    )
    group = "users who like: comedy, western, drama."
    assert chosen == "Moonlight Harbor. About: drama, romance. Liked by " + group
    assert rejected == "Iron Comet. About: action, sci-fi. Passed over by " + group
    # What other users taught the item is kept after the new group.
    again, _ = reflect_items("I like items about: opera.", (DRAMA, chosen), (ACTION, rejected), 400)
    assert again.endswith("Liked by users who like: opera, comedy, western.")
    assert item_terms(DRAMA, chosen) == (["drama", "romance", "comedy", "western"], [])


def test_affinity_by_hand() -> None:
    user = "I like items about: drama, romance. I dislike items about: action."
    # likes weigh 1/(1 + 0.2k): drama 1, romance 1/1.2; two terms: divided by sqrt(2)
    assert affinity(user, DRAMA, initial_item_memory(DRAMA)) == pytest.approx((1 + 1 / 1.2) / math.sqrt(2))
    # action is disliked (weight 1); sci-fi unknown
    assert affinity(user, ACTION, initial_item_memory(ACTION)) == pytest.approx(-1 / math.sqrt(2))
    passed = "Iron Comet. About: action, sci-fi. Passed over by users who like: drama."
    assert affinity(user, ACTION, passed) == pytest.approx((-1 - 0.5) / math.sqrt(2))
    assert affinity(user, ACTION, passed, dislike=0.0) == 0.0
