"""The leave-one-out split of presplit datasets against the straightforward version it replaced."""

from pathlib import Path

from world.data import Dataset, Interaction, Item, PresplitUser
from world.datasets import load_path
from world.split import UserCase, _from_presplit, leave_one_out
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


def reference_split(dataset: Dataset) -> dict[str, UserCase]:
    """The split as it was computed before: every event rebuilt from a (user, item) -> time map."""
    assert dataset.presplit is not None
    times = {(e.user_id, e.item_id): e.timestamp for e in dataset.interactions}
    cases = {}
    for user_id, fixed in dataset.presplit.items():
        sequence = [*fixed.history, *([fixed.valid] if fixed.valid else []), fixed.target]
        events, last = [], 0.0
        for position, item in enumerate(sequence):
            default = float(position) if not dataset.has_time else last
            last = times.get((user_id, item), default)
            events.append(Interaction(user_id, item, last))
        valid = events[-2] if fixed.valid else None
        history = events[:-2] if fixed.valid else events[:-1]
        cases[user_id] = UserCase(user_id, tuple(history), valid, events[-1])
    return cases


def test_synthetic_sequential_dataset_splits_as_before(tmp_path: Path) -> None:
    spec = SynthSpec(users=60, items=90, interactions=700, categories=False, timestamps=False, pool=10)
    write_synth(generate(spec), tmp_path)
    dataset = load_path(tmp_path)
    cases = leave_one_out(dataset)
    assert cases == reference_split(dataset)
    assert list(cases) == list(dataset.presplit or {})


def test_repeats_ratings_missing_events_and_times_split_as_before() -> None:
    items = {i: Item(i, f"title {i}") for i in "abcde"}
    interactions = [
        Interaction("u1", "a", 10.0), Interaction("u1", "b", 20.0), Interaction("u1", "a", 30.0),
        Interaction("u2", "c", 5.0, rating=4.0), Interaction("u2", "d", 7.0, review="fine"),
        Interaction("u3", "e", 1.0),
    ]  # fmt: skip
    presplit = {
        "u1": PresplitUser(("a", "b"), "a", "c"),  # repeated item; target without an interaction
        "u2": PresplitUser(("c",), "d", "e"),  # rated and reviewed events are rebuilt without them
        "u3": PresplitUser(("a",), None, "e"),  # no validation item; history event unknown
    }
    for has_time in (True, False):
        dataset = Dataset("t", items, interactions, has_time=has_time, presplit=presplit)
        cases = _from_presplit(dataset)
        assert cases == reference_split(dataset)
        assert cases["u1"].history[0].timestamp == 30.0 and cases["u2"].history[0].rating is None
    assert _from_presplit(dataset)["u3"].history[0].timestamp == 0.0


def test_loading_pauses_the_collector_and_restores_it(tmp_path: Path) -> None:
    import gc

    from world.datasets import collector_paused, load_dataset

    spec = SynthSpec(users=20, items=40, interactions=200, categories=False, timestamps=False)
    write_synth(generate(spec), tmp_path)
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()
    assert len(load_dataset(str(tmp_path)).presplit or {}) == 20 and gc.isenabled()
