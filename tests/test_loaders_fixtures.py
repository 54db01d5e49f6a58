"""The committed fixture datasets (tests/fixtures/datasets/<format>/, InstructRec under
instructrec/Books/) load, have the shape other tests and `recgraph reproduce` rely on (120 users, at
least 10 interactions each), and are exactly what tests/fixtures/make_datasets.py writes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.fixtures.make_datasets import HERE, MIN_LENGTH, write_fixtures
from world.datasets import load_path
from world.split import leave_one_out

FORMATS = ("amazon2023", "amazon2018", "mind")


@pytest.mark.parametrize("name", FORMATS)
def test_fixture_loads_with_long_histories(name: str) -> None:
    data = load_path(HERE / name)
    lengths = Counter(e.user_id for e in data.interactions)
    assert len(lengths) == 120 and min(lengths.values()) >= MIN_LENGTH
    assert len(leave_one_out(data)) == 120
    assert data.has_time and all(item.title and item.categories for item in data.items.values())


def test_instructrec_fixture_is_memrec_books_shaped() -> None:
    """InstructRec Books as MemRec converts it: positions, not times; titles and descriptions, no
    categories; one instruction per user; no candidate pools (the bench draws uniform negatives)."""
    data = load_path(HERE / "instructrec" / "Books")
    lengths = Counter(e.user_id for e in data.interactions)
    assert data.name == "Books" and len(lengths) == 120 and min(lengths.values()) >= MIN_LENGTH
    assert len(leave_one_out(data)) == 120 and not data.has_time and data.presplit is None
    assert set(data.instructions) == set(lengths) and all(not item.categories for item in data.items.values())
    assert sum(bool(item.description) for item in data.items.values()) > len(data.items) / 2


def test_mind_fixture_ships_pools_with_enough_negatives() -> None:
    data = load_path(HERE / "mind")
    assert data.presplit is not None and len(data.presplit) == 120
    usable = [sum(1 for c in fixed.candidates or () if c != fixed.target) for fixed in data.presplit.values()]
    assert min(usable) >= 19  # N=20 under --candidate-source impressions: 19 from the user's impression


def test_fixtures_are_what_the_generator_writes(tmp_path: Path) -> None:
    write_fixtures(tmp_path)
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    committed = sorted(p.relative_to(HERE) for p in HERE.rglob("*") if p.is_file())
    assert written == committed
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (HERE / relative).read_bytes(), relative
