"""A bounded sample of each item's reviews, from training interactions only.

ARAG's item text T(i) is its title, description and reviews (paper 4.2). Reviews sit on
interactions (`Interaction.review`), and an evaluated user's validation and test interactions are
held out: a review written with the target would tell a method which item the user chose. So an
item's sample holds only reviews of training interactions: (user, item) pairs in a split user's
training history (`UserCase.history`) that are not also that user's validation or target item.
Interactions of users too short to split are not training data either and are left out. In a
scenario's evaluation world (`world.evaluation_world`) the world's own split applies, so what the
scenario hides is not sampled.

The sample is the first `REVIEWS_PER_ITEM` non-empty reviews of the item in time order (ties in
file order): deterministic, and the same for every user and method.
"""

from __future__ import annotations

from world.environment import Environment

REVIEWS_PER_ITEM = 2
"""Most reviews an item's sample keeps."""


def training_pairs(env: Environment) -> set[tuple[str, str]]:
    """(user, item) pairs of training interactions that are never the user's validation or target."""
    pairs: set[tuple[str, str]] = set()
    for user, case in env.cases.items():
        held_out = {case.target.item_id, *([case.valid.item_id] if case.valid else [])}
        pairs.update((user, e.item_id) for e in case.history if e.item_id not in held_out)
    return pairs


def _sample(env: Environment) -> dict[str, tuple[str, ...]]:
    allowed = training_pairs(env)
    reviewed = [
        (e.timestamp, order, e)
        for order, e in enumerate(env.dataset.interactions)
        if e.review and e.review.strip() and (e.user_id, e.item_id) in allowed
    ]
    reviewed.sort(key=lambda row: (row[0], row[1]))
    sample: dict[str, list[str]] = {}
    for _, _, e in reviewed:
        kept = sample.setdefault(e.item_id, [])
        if len(kept) < REVIEWS_PER_ITEM:
            kept.append(str(e.review).strip())
    return {item: tuple(texts) for item, texts in sample.items()}


def item_reviews(env: Environment, item_id: str) -> tuple[str, ...]:
    """The item's review sample (empty when the dataset has no training review of it)."""
    if not has_reviews(env):
        return ()
    return env.resource("item_reviews", lambda: _sample(env)).get(item_id, ())


def has_reviews(env: Environment) -> bool:
    """Whether any interaction of the dataset carries review text (checked once per environment)."""
    return env.resource("has_reviews", lambda: any(e.review for e in env.dataset.interactions))
