"""The filters applied after loading (`world.filters`): the iterative k-core and the user filter on
hand-built data, fixed splits following the filter, the spec marks, the options in either order,
and what `recgraph datasets` and the bench header say was kept."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from recgraph.cli import build_parser, main
from world.data import Dataset, Interaction, Item, PresplitUser
from world.errors import ProtocolError
from world.filters import (
    Filters,
    apply_filters,
    filter_notes,
    filtered_spec,
    k_core,
    min_user_interactions,
    split_spec,
)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "datasets"


def dataset(pairs: str, presplit: dict[str, PresplitUser] | None = None) -> Dataset:
    """A dataset from "user:item user:item ..." (times in order); the catalog holds every item
    named, and an unused item "z"."""
    events = [Interaction(*pair.split(":"), float(t)) for t, pair in enumerate(pairs.split())]
    names = {e.item_id for e in events} | {"z"}
    if presplit:
        names |= {i for fixed in presplit.values() for i in fixed.candidates or ()}
    items = {name: Item(name, name.upper()) for name in sorted(names)}
    return Dataset("toy", items, events, presplit=presplit, source="/data/toy")


# a, b: 2 users each... u3 holds the only 2 interactions of c and d; dropping u3 (2 interactions
# under the 2-core? no: 3-core) leaves c and d with none, and then u4 (a, c, d) with 1: two rounds.
CASCADE = "u1:a u1:b u1:e u2:a u2:b u2:e u3:c u3:d u3:a u4:a u4:c u4:b u5:e u5:a u5:b"


def test_k_core_repeats_until_every_user_and_item_has_k() -> None:
    data = k_core(dataset(CASCADE), 3)
    # round 1: items c (2) and d (1) fall; round 2: u3 (a only) and u4 (a, b) fall; round 3: stable
    assert sorted({(e.user_id, e.item_id) for e in data.interactions}) == [
        (u, i) for u in ("u1", "u2", "u5") for i in ("a", "b", "e")
    ]
    assert sorted(data.items) == ["a", "b", "e"]
    assert data.name == "toy-kcore3" and data.source == "/data/toy#kcore:3"
    assert data.filtered == (
        "3-core (users and items with at least 3 interactions, 3 rounds): "
        "users 5 → 3, items 6 → 3, interactions 15 → 9"
    )


def test_k_core_of_1_and_a_core_that_keeps_everything() -> None:
    base = dataset(CASCADE)
    assert k_core(base, 1) is base
    kept = k_core(dataset("u1:a u1:b u2:a u2:b"), 2)
    assert len(kept.interactions) == 4 and sorted(kept.items) == ["a", "b"]  # "z" has no interaction
    assert kept.filtered.endswith("1 rounds): users 2 → 2, items 3 → 2, interactions 4 → 4")


def test_user_filter_keeps_the_catalog() -> None:
    data = min_user_interactions(dataset(CASCADE), 4)
    assert data.interactions == []
    data = min_user_interactions(dataset(CASCADE + " u1:c"), 4)
    assert {e.user_id for e in data.interactions} == {"u1"}
    assert len(data.items) == 6  # catalog unchanged
    assert (
        data.filtered == "users with at least 4 interactions: users 5 → 1, items 6 → 6, interactions 16 → 4"
    )


def test_a_fixed_split_follows_the_filter() -> None:
    presplit = {
        "u1": PresplitUser(("a", "d"), "b", "e", ("c", "d", "a", "x")),
        "u3": PresplitUser(("c",), "d", "a", None),
        "u5": PresplitUser(("e",), "c", "b", None),
    }
    data = k_core(dataset(CASCADE, presplit), 3)
    assert data.presplit == {
        "u1": PresplitUser(("a",), "b", "e", ("a",)),  # d, c and x are not in the core
        "u5": PresplitUser((), "e", "b", None),  # its validation item c fell: the history's last takes it
    }  # u3 left the data


def test_nothing_left_is_refused() -> None:
    with pytest.raises(ProtocolError, match=r"'toy': users with at least 9 interactions: .*nothing is left"):
        apply_filters(dataset(CASCADE), Filters(min_user=9))


def test_both_filters_apply_the_k_core_first() -> None:
    data = apply_filters(dataset(CASCADE + " u1:z u2:z u5:z u1:c"), Filters(kcore=3, min_user=4))
    # the 3-core keeps u1, u2, u5 with a, b, e, z (c falls with u3 and u4); all three have 4
    assert len(data.interactions) == 12 and sorted(data.items) == ["a", "b", "e", "z"]
    core, users = data.filtered.split("; ")
    assert core.startswith("3-core") and users.startswith("users with at least 4 interactions: users 3 → 3")
    assert data.name == "toy-kcore3-min-user4"


def test_spec_marks_round_trip() -> None:
    assert filtered_spec("data/x", 5, 11) == "data/x#kcore:5#min-user:11"
    assert filtered_spec("data/x", 0, 0) == "data/x"
    assert split_spec("data/x#min-user:11#kcore:5") == ("data/x", Filters(5, 11))
    assert filtered_spec("data/x#kcore:5", 0, 3) == "data/x#kcore:5#min-user:3"
    with pytest.raises(ProtocolError, match="--min-interactions must be 0"):
        filtered_spec("data/x", -1)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench", "--dataset", "d", "--min-interactions", "5", "--min-user-interactions", "11"],
        ["bench", "--min-user-interactions", "11", "--min-interactions", "5", "--dataset", "d"],
        ["recommend", "--method", "bpr", "--user", "1", "--min-interactions", "5", "--dataset", "d",
         "--min-user-interactions", "11"],
    ],
)  # fmt: skip
def test_options_give_the_filtered_spec_in_any_order(argv: list[str]) -> None:
    assert build_parser().parse_args(argv).dataset == "d#kcore:5#min-user:11"


def test_negative_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["bench", "--min-interactions", "-2"])
    assert stopped.value.code == 2
    assert "--min-interactions must be 0 (off) or more, got -2" in capsys.readouterr().err


def plain_core(pairs: list[tuple[str, str]], k: int) -> list[tuple[str, str]]:
    """The k-core by the definition, with no numpy: drop, recount, until nothing changes."""
    while True:
        users = Counter(u for u, _ in pairs)
        items = Counter(i for _, i in pairs)
        kept = [(u, i) for u, i in pairs if users[u] >= k and items[i] >= k]
        if len(kept) == len(pairs):
            return kept
        pairs = kept


def test_datasets_command_reports_what_the_core_kept(capsys: pytest.CaptureFixture[str]) -> None:
    path = FIXTURES / "amazon2023" / "Digital_Music.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    pairs = [(r["user_id"], r["parent_asin"]) for r in records]
    core = plain_core(pairs, 5)
    before = (len(set(u for u, _ in pairs)), len(set(i for _, i in pairs)), len(pairs))
    after = (len(set(u for u, _ in core)), len(set(i for _, i in core)), len(core))
    assert main(["datasets", str(path.parent), "--min-interactions", "5"]) == 0
    out = capsys.readouterr().out
    assert f"{path}: 5-core (users and items with at least 5 interactions, " in out
    names = ("users", "items", "interactions")
    counts = ", ".join(f"{n} {b:,} → {a:,}" for n, b, a in zip(names, before, after, strict=True))
    assert counts in out
    assert after[2] < before[2]  # the fixture is not its own 5-core: the filter had work to do


def test_run_header_hook_names_the_filter() -> None:
    from world.environment import get_environment

    path = FIXTURES / "amazon2023" / "Digital_Music.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    counts = Counter(record["user_id"] for record in lines)
    kept = [n for n in counts.values() if n >= 30]
    items = len({record["parent_asin"] for record in lines})
    env = get_environment(filtered_spec(str(path.parent), 0, 30))
    assert filter_notes(env, {}) == [
        f"filters: users with at least 30 interactions: users {len(counts)} → {len(kept)}, "
        f"items {items} → {items}, interactions {len(lines):,} → {sum(kept):,}"
    ]
    assert env.dataset.name == "Digital_Music-min-user30"
