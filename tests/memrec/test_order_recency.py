"""MemRec's curation on order-only data: positions read in days at the median pace, by hand, and the
run header naming, once, the rules that read a field the dataset lacks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents.memrec.feature_index import feature_index
from agents.memrec.features import neighbour_features
from agents.memrec.order_clock import ORDER_HORIZON_DAYS, median_pace
from agents.memrec.rule_fields import curation_notes, missing_field_rules, rules_reading
from agents.memrec.rule_files import load_rule_set
from agents.memrec.rule_scoring import score_neighbours
from agents.memrec.statistics import domain_statistics
from recgraph.run_header import dataset_notes
from state.memrec.context import MemRecContext
from world.environment import get_environment

# user -> sequence (sequential layout: training history, then the validation item, then the test
# target). Training histories: a 1 2 3 4 5 | b 3 5 8 | c 1 8 4 10 | d 2 9 12 | e 6 7 11 12 4:
# lengths 5 3 4 3 5, median 4, so the pace is 4 interactions per 365 days and one position is
# 91.25 days.
SEQUENCES = {
    "a": "1 2 3 4 5 6 7",
    "b": "3 5 8 9 2",
    "c": "1 8 4 10 11 3",
    "d": "2 9 12 1 5",
    "e": "6 7 11 12 4 1 10",
}
DAYS = ORDER_HORIZON_DAYS / 4


def write_order_only(folder: Path, name: str) -> Path:
    """A titles-only, order-only catalog in the sequential layout of the public Amazon dumps."""
    folder.mkdir(parents=True)
    items = ["item_id:token\ttitle:token_seq"] + [f"{i}\tTitle number {i}" for i in range(1, 13)]
    (folder / f"{name}.item").write_text("\n".join(items) + "\n")
    rows = ["user_id:token\titem_id_list:token_seq\titem_id:token"]
    rows += [f"{user}\t{' '.join(seq.split()[:-1])}\t{seq.split()[-1]}" for user, seq in SEQUENCES.items()]
    (folder / f"{name}.test.inter").write_text("\n".join(rows) + "\n")
    return folder


@pytest.fixture
def order_only(tmp_path: Path) -> Path:
    """The catalog above, named so that `memrec_rules=auto` picks the MovieTV rules."""
    return write_order_only(tmp_path / "movie-order", "movie-order")


def recency_of(found, node: str) -> float:
    row = found.node_ids.tolist().index(node)
    return float(found.matrix[row, 1])


def test_median_pace_by_hand() -> None:
    assert median_pace(np.array([5.0, 3.0, 4.0, 3.0, 5.0])) == pytest.approx(4 / 365)
    assert median_pace(np.array([0.0, 0.0])) == pytest.approx(1 / 365)  # no history: one a year


def test_positions_read_in_days_by_hand(order_only: Path) -> None:
    env = get_environment(str(order_only))
    assert not env.dataset.has_time
    index = feature_index(env)
    assert index.clock.pace == pytest.approx(4 / 365)
    assert index.clock.days_per_interaction == pytest.approx(DAYS)
    found = neighbour_features(index, "a", ["7", "9"])
    # a's items, newest first: 5 4 3 2 1 -> 0, 1, 2, 3, 4 positions back.
    for item, back in {"5": 0, "4": 1, "3": 2, "2": 3, "1": 4}.items():
        assert recency_of(found, f"i:{item}") == pytest.approx(back * DAYS)
    # A user neighbour: its latest interaction with a shared item, counted in its own sequence
    # (every training sequence ends at the same moment): b's 5 is 1 back, c's 4 is 1 back,
    # d's 2 is 2 back, e's 4 is its newest.
    expected_users = {"b": 1, "c": 1, "d": 2, "e": 0}
    assert sorted(n for n in found.node_ids.tolist() if n.startswith("u:")) == [f"u:{u}" for u in "bcde"]
    for user, back in expected_users.items():
        assert recency_of(found, f"u:{user}") == pytest.approx(back * DAYS)
    # Only items 2 and 3 visible: the anchor is a's interaction with 3 (2 back), and b's latest
    # shared item is now 3 (2 back in b's sequence): the same moment.
    hidden = neighbour_features(index, "a", ["7", "9"], visible=["2", "3"])
    assert recency_of(hidden, "i:3") == 0.0 and recency_of(hidden, "i:2") == pytest.approx(DAYS)
    assert recency_of(hidden, "u:b") == 0.0 and recency_of(hidden, "u:d") == 0.0


def test_a_day_threshold_fires_for_exactly_the_neighbours_the_mapping_says(order_only: Path) -> None:
    env = get_environment(str(order_only))
    found = neighbour_features(feature_index(env), "a", ["7", "9"])
    rule_set = load_rule_set(
        {
            "name": "t",
            "domain": "t",
            "rules": [
                {
                    "id": "older_than_100_days",
                    "name": "x",
                    "when": [{"feature": "recency_days", "op": ">", "value": 100}],
                    "effects": [{"type": "penalty", "value": 0.5}],
                }
            ],
        }
    )
    scores = score_neighbours(rule_set, found.matrix, found.is_item)
    fired = {node for node, score in zip(found.node_ids.tolist(), scores, strict=True) if score == 0.5}
    # 100 days = 1.1 positions: fires 2 or more positions back, never 0 or 1.
    assert fired == {"i:3", "i:2", "i:1", "u:d"}
    assert {node for node, score in zip(found.node_ids.tolist(), scores, strict=True) if score == 1.0} == {
        "i:5",
        "i:4",
        "u:b",
        "u:c",
        "u:e",
    }


def test_rule_writer_statistics_say_how_recency_is_read(order_only: Path) -> None:
    stats = domain_statistics(get_environment(str(order_only)))
    assert stats["time_span_days"] is None
    assert stats["recency_days"] == (
        "no timestamps: interaction order read in days, one position = 91.2 days "
        "(the median user's training history taken as 365 days)"
    )
    unavailable = "metadata_overlap_score: no item categories, 0 for every neighbour"
    assert stats["unavailable_features"] == [unavailable]


def test_timestamps_are_the_clock_unchanged(tiny_dataset_dir: Path) -> None:
    index = feature_index(get_environment(str(tiny_dataset_dir)))
    assert index.clock.pace is None and index.clock.days_per_interaction is None
    assert index.clock.user_times is index.graph.user_item_times
    assert index.clock.item_times is index.graph.item_user_times


def test_order_only_clock_is_the_same_edge_in_both_orders(order_only: Path) -> None:
    index = feature_index(get_environment(str(order_only)))
    graph, env = index.graph, index.env
    by_edge = {}
    for u in range(len(env.user_ids)):
        for k in range(graph.user_ptr[u], graph.user_ptr[u + 1]):
            by_edge[(u, int(graph.user_items[k]))] = index.clock.user_times[k]
    for i in range(len(env.item_ids)):
        for k in range(graph.item_ptr[i], graph.item_ptr[i + 1]):
            assert index.clock.item_times[k] == by_edge[(int(graph.item_users[k]), i)]


def test_rules_reading_a_feature() -> None:
    movietv = load_rule_set("movietv")
    assert rules_reading(movietv, "recency_days") == ["strong_recency_decay", "recency_filter"]
    # memory_guided tests metadata overlap in its effects' conditions only.
    assert rules_reading(movietv, "metadata_overlap_score") == ["metadata_compensation", "memory_guided"]
    sets = {"movietv": movietv, "generic": load_rule_set("generic")}
    assert missing_field_rules(sets, frozenset({"categories", "timestamps"})) == {}
    assert missing_field_rules(sets, frozenset({"categories"})) == {
        "recency_days": ["movietv: strong_recency_decay, recency_filter", "generic: recency_half_life"]
    }


def test_header_names_each_rule_once(order_only: Path) -> None:
    env = get_environment(str(order_only))
    contexts = {
        "memrec": MemRecContext(),  # auto: movie -> movietv
        "memrec_no_write": MemRecContext(),
        "memrec_no_llm_rules": MemRecContext(memrec_rules="generic"),
        "memrec_no_read": MemRecContext(memrec_rules="books", memrec_use_read=False),
    }
    lines = dataset_notes(env, contexts)
    assert lines == curation_notes(env, contexts) and len(lines) == 1
    line = lines[0]
    assert line.startswith("MemRec curation rules on movie-order. No timestamps (interaction order only): ")
    assert "one position = 91.2 days" in line and "4 interactions per 365 days" in line
    recency = "movietv: strong_recency_decay, recency_filter; generic: recency_half_life"
    assert f"rules reading it: {recency}" in line
    assert ". No item categories: metadata_overlap_score is 0 for every neighbour" in line
    assert "movietv: metadata_compensation, memory_guided; generic: metadata_match" in line
    for rule in ("strong_recency_decay", "recency_filter", "recency_half_life", "metadata_match"):
        assert line.count(rule) == 1
    assert "books" not in line  # memrec_no_read reads no neighbours: no rules


def test_no_header_line_when_the_dataset_has_every_field(tiny_dataset_dir: Path) -> None:
    env = get_environment(str(tiny_dataset_dir))
    assert curation_notes(env, {"memrec": MemRecContext(memrec_rules="movietv")}) == []
    assert curation_notes(env, {"random": object()}) == []  # type: ignore[dict-item]


def test_bench_header_says_it_once(order_only: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from recgraph.cli import main

    code = main(
        [
            "bench",
            "--methods",
            "memrec,memrec_no_llm_rules",
            "--dataset",
            str(order_only),
            "--users",
            "2",
            "--candidates",
            "4",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.count("MemRec curation rules on movie-order") == 1
    assert out.count("strong_recency_decay") == 1
