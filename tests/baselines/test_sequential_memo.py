"""A trained sequential model scores a history it scored before from its memo: the same bits as the
network's own answer, a copy the caller may change, and at most `SCORE_MEMO_BYTES` of rows kept."""

from __future__ import annotations

import numpy as np
import pytest

from agents.baselines import sequential
from agents.baselines.sequential import train_sequential
from tests.baselines.test_trained import catalog, context  # noqa: F401  (the fixture)
from world.environment import get_environment


@pytest.mark.parametrize("name", ["sasrec", "gru4rec"])
def test_a_history_scored_again_is_read_from_the_memo_bit_for_bit(
    name: str,
    catalog: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = train_sequential(get_environment(catalog), context(catalog), name)
    calls: list[list[int]] = []
    network_score = model.recommender.score

    def counted(user: int, history_items: list[int]) -> np.ndarray:
        calls.append(list(history_items))
        return network_score(user, history_items=history_items)

    monkeypatch.setattr(model.recommender, "score", counted)
    history = [3, 4, 5, 6, 7, 8, 9]  # longer than max_len 5: the last five are read
    first = model.scores(history)
    first[:] = -1.0  # the caller's copy
    again = model.scores([1, 2, *history[2:]])  # the same last five rows
    assert calls == [history[2:]]
    expected = np.asarray(network_score(0, history_items=history[2:]), dtype=np.float64)
    assert np.array_equal(again, expected)
    again[:] = -1.0  # a copy read from the memo, too
    assert np.array_equal(model.scores(history), expected) and calls == [history[2:]]
    model.scores([2, 3, 4])  # another history is scored by the network
    assert calls == [history[2:], [2, 3, 4]]


def test_the_memo_keeps_the_latest_rows_within_its_bytes(
    catalog: str,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = train_sequential(get_environment(catalog), context(catalog), "gru4rec")
    row_bytes = model.scores([1]).nbytes
    monkeypatch.setattr(sequential, "SCORE_MEMO_BYTES", 2 * row_bytes)
    model.memo.clear()
    for history in ([1], [2], [3]):
        model.scores(history)
    assert list(model.memo) == [(2,), (3,)]  # the oldest left first
    model.scores([2])  # read: now the most recent
    model.scores([4])
    assert list(model.memo) == [(2,), (4,)]
