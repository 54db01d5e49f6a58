"""Leave-one-out split by time: last interaction = test, second-last = validation."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from world.data import Dataset, Interaction


@dataclass(frozen=True, slots=True)
class UserCase:
    """One user's split."""

    user_id: str
    """The user."""
    history: tuple[Interaction, ...]
    """Training interactions, oldest first (what CF models and memories train on)."""
    valid: Interaction | None
    """Validation / warm-up interaction (visible at test time)."""
    target: Interaction
    """The held-out test interaction."""

    def before_target(self) -> tuple[Interaction, ...]:
        """Everything the user did before the test target: training history plus warm-up."""
        return (*self.history, self.valid) if self.valid else self.history


def held_out_events(cases: Mapping[str, UserCase]) -> set[tuple[str, str, float]]:
    """(user, item, timestamp) of every split user's validation and test interactions: what no
    learner trains on (docs/benchmarking.md, "What learners learn from")."""
    held: set[tuple[str, str, float]] = set()
    for case in cases.values():
        for event in (case.valid, case.target):
            if event is not None:
                held.add((case.user_id, event.item_id, event.timestamp))
    return held


def leave_one_out(dataset: Dataset, min_interactions: int = 3) -> dict[str, UserCase]:
    """Split every user with at least `min_interactions` interactions.

    Ties in time keep file order (a stable sort), so the split is deterministic.
    Datasets that fix their own split (`Dataset.presplit`) keep it.
    """
    if dataset.presplit is not None:
        return _from_presplit(dataset)
    by_user: dict[str, list[Interaction]] = defaultdict(list)
    for interaction in dataset.interactions:
        by_user[interaction.user_id].append(interaction)
    cases: dict[str, UserCase] = {}
    for user_id, events in by_user.items():
        if len(events) < max(min_interactions, 2):
            continue
        events.sort(key=lambda e: e.timestamp)
        cases[user_id] = UserCase(user_id, tuple(events[:-2]), events[-2], events[-1])
    return cases


def _from_presplit(dataset: Dataset) -> dict[str, UserCase]:
    assert dataset.presplit is not None
    # Keep real timestamps where the interactions have them; the target of a task file
    # may have none, and then takes the time of the last event before it. An event equal to the
    # dataset's own interaction (no rating or review) is that object: on a 50k-user catalog,
    # building 400k equal frozen objects again was half of the split's time.
    latest = {(e.user_id, e.item_id): e for e in dataset.interactions}
    cases = {}
    for user_id, fixed in dataset.presplit.items():
        sequence = [*fixed.history, *([fixed.valid] if fixed.valid else []), fixed.target]
        events, last = [], 0.0
        for position, item in enumerate(sequence):
            known = latest.get((user_id, item))
            if known is None:
                last = float(position) if not dataset.has_time else last
                events.append(Interaction(user_id, item, last))
                continue
            last = known.timestamp
            plain = known.rating is None and known.review is None
            events.append(known if plain else Interaction(user_id, item, last))
        valid = events[-2] if fixed.valid else None
        history = events[:-2] if fixed.valid else events[:-1]
        cases[user_id] = UserCase(user_id, tuple(history), valid, events[-1])
    return cases
