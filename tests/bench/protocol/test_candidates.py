"""Candidate sampling: reproducible per user, independent of order, protocol-correct."""

import pytest

from bench.protocol.candidates import sample_candidates
from world.errors import ProtocolError

CATALOG = [str(i) for i in range(1, 201)]


def draw(user: str, seed: int = 0, n: int = 10, interacted: set[str] | None = None, pool=None):
    return sample_candidates(
        user_id=user,
        target="7",
        n=n,
        catalog=CATALOG,
        interacted=interacted if interacted is not None else {"1", "2", "3"},
        seed=seed,
        pool=pool,
    )


def test_target_plus_unseen_negatives() -> None:
    candidates = draw("u1")
    assert len(candidates) == 10 and len(set(candidates)) == 10
    assert "7" in candidates
    assert not {"1", "2", "3"} & set(candidates)


def test_same_seed_same_candidates_whatever_the_order() -> None:
    first = {u: draw(u) for u in ("a", "b", "c")}
    second = {u: draw(u) for u in ("c", "b", "a")}
    assert first == second


def test_seed_and_user_change_the_draw() -> None:
    assert draw("a", seed=0) != draw("a", seed=1)
    assert draw("a") != draw("b")


def test_target_position_is_shuffled() -> None:
    positions = {draw(f"user{i}").index("7") for i in range(40)}
    assert len(positions) > 5


def test_pregenerated_pool_is_used() -> None:
    pool = ["7", "50", "51", "52", "53", "1"]
    candidates = draw("u", n=5, pool=pool)
    assert sorted(candidates) == sorted(["7", "50", "51", "52", "53"])  # "1" was seen


def test_pool_too_small_is_refused() -> None:
    with pytest.raises(ProtocolError, match="pre-generated pool has 2 usable negatives"):
        draw("u", n=5, pool=["7", "50", "51"])


def test_fewer_than_two_candidates_is_refused() -> None:
    with pytest.raises(ProtocolError, match="--candidates must be at least 2"):
        draw("u", n=1)


def test_not_enough_unseen_items() -> None:
    # 196 seen items (target excluded) + the target leave 200 - 196 - 1 + 1 = 4 unseen.
    interacted = set(CATALOG[:196]) - {"7"}
    assert len(draw("u", n=5, interacted=interacted)) == 5
    with pytest.raises(ProtocolError, match="only 4 unseen items; cannot draw 5 negatives"):
        draw("u", n=6, interacted=interacted)
