"""Synthetic catalogs for scale and shape tests (`recgraph datasets synth`), generated with numpy.

The structure is the one real logs have, so that collaborative baselines beat random on it:

- item popularity is Zipf-like (weight ~ 1 / rank^`ZIPF_EXPONENT`, ranks shuffled over the catalog);
- every item has one category (category sizes uneven); each user has an *early*, a *late* and a
  *steady* favourite category and drifts from the early one to the late one over the sequence,
  with some exploration of the whole catalog;
- sequences have sequential structure: after an item, a user often takes its "sequel" (a fixed
  partner item of the same category), which co-occurrence and sequential models can learn;
- a user never repeats an item; every user has at least `MIN_LENGTH` interactions (history,
  validation and test); lengths are heavy-tailed.

Everything is drawn from one seeded generator: the same arguments give identical files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from world.errors import RecgraphError
from world.synth_text import category_names, item_titles

ZIPF_EXPONENT = 0.9
"""Popularity weight of the item of popularity rank r (1-based) is r ** -ZIPF_EXPONENT."""
MIN_LENGTH = 3
"""Interactions every user has at least (training history, validation and test target)."""
EXPLORE = 0.1
"""Share of interactions in a category drawn from the global category mix (not the user's)."""
STEADY = 0.3
"""Share of a user's own-category interactions in their steady favourite category."""
SEQUEL = 0.25
"""Share of interactions (after the first) that take the previous item's sequel."""
POOL_FRACTION = 0.12
"""Share of users given a pre-sampled candidate pool (the issue's catalog: ≈6k of ≈50k users)."""
ITEMS_PER_CATEGORY = 400
MIN_CATEGORIES, MAX_CATEGORIES = 6, 60
DAY = 86_400
START = 1_500_000_000
"""Epoch seconds (July 2017) around which timestamped histories begin."""


class SynthError(RecgraphError):
    """Synthetic dataset arguments that cannot be satisfied."""


@dataclass(frozen=True)
class SynthSpec:
    """What to generate (the `recgraph datasets synth` arguments)."""

    users: int
    """Users to generate."""
    items: int
    """Catalog size."""
    interactions: int
    """Interactions in all (at least `MIN_LENGTH` per user)."""
    categories: bool = True
    """Give items a category (False: titles only)."""
    timestamps: bool = True
    """Give interactions timestamps (False: order only)."""
    pool: int = 0
    """Pre-sampled candidates per pool user (0: no pools)."""
    pool_fraction: float = POOL_FRACTION
    """Share of users with a pool (when `pool` > 0)."""
    seed: int = 0
    """Seed of every draw."""

    def check(self) -> None:
        """Raise `SynthError` naming the first argument that cannot work."""
        if self.users < 1 or self.items < 1:
            raise SynthError(f"--users and --items must be positive (got {self.users}, {self.items})")
        if self.items < 2 * MIN_LENGTH:
            raise SynthError(f"--items must be at least {2 * MIN_LENGTH} (got {self.items})")
        if self.interactions < MIN_LENGTH * self.users:
            raise SynthError(
                f"--interactions must be at least {MIN_LENGTH} per user ({MIN_LENGTH * self.users} "
                f"for {self.users} users), got {self.interactions}"
            )
        if self.interactions > max_length(self.items) * self.users:
            raise SynthError(
                f"--interactions can be at most {max_length(self.items)} per user (half the catalog) "
                f"for {self.users} users: {max_length(self.items) * self.users}, got {self.interactions}"
            )
        if self.pool < 0 or self.pool >= self.items - MIN_LENGTH:
            raise SynthError(f"--candidates-pool must be between 0 and {self.items - MIN_LENGTH - 1}")
        if not 0 < self.pool_fraction <= 1:
            raise SynthError(f"the pool fraction must be in (0, 1], got {self.pool_fraction}")
        if self.pool and self.timestamps:
            raise SynthError(
                "--candidates-pool needs --no-timestamps: the layout with pre-sampled pools "
                "(<name>.test.inter + <name>.random) carries interaction order, not times"
            )


@dataclass
class SynthData:
    """A generated catalog as arrays (item and user indexes are 0-based; ids are index + 1)."""

    spec: SynthSpec
    """What was asked for."""
    titles: list[str]
    """Title per item."""
    item_category: np.ndarray
    """Category index per item."""
    category_names: list[str]
    """Name per category index."""
    offsets: np.ndarray
    """User u's sequence is `sequence[offsets[u]:offsets[u + 1]]` (oldest first)."""
    sequence: np.ndarray
    """Item indexes of every user's sequence, concatenated."""
    times: np.ndarray | None
    """Epoch seconds per interaction (None: order only)."""
    pools: dict[int, np.ndarray] = field(default_factory=dict)
    """User index -> pre-sampled candidate item indexes (never items the user interacted with)."""

    def summary(self) -> dict[str, object]:
        """The arguments and the sizes generated (what the manifest records)."""
        return {
            "spec": asdict(self.spec),
            "users": len(self.offsets) - 1,
            "items": len(self.titles),
            "interactions": len(self.sequence),
            "categories": len(self.category_names) if self.spec.categories else 0,
            "pool_users": len(self.pools),
        }


def _lengths(rng: np.random.Generator, spec: SynthSpec) -> np.ndarray:
    """Heavy-tailed sequence lengths summing to `interactions` (capped so dedup can succeed)."""
    activity = rng.lognormal(0.0, 1.0, size=spec.users)
    extra = rng.multinomial(spec.interactions - MIN_LENGTH * spec.users, activity / activity.sum())
    lengths, cap = MIN_LENGTH + extra, max_length(spec.items)
    while (excess := int(np.maximum(lengths - cap, 0).sum())) > 0:  # hand the excess to others
        lengths = np.minimum(lengths, cap)
        room = cap - lengths
        lengths += rng.multinomial(excess, room / room.sum())
    return lengths


def max_length(items: int) -> int:
    """The longest history generated: half the catalog (so that histories need no repeats)."""
    return max(MIN_LENGTH, items // 2)


class _Sampler:
    """Draws items of given categories by Zipf popularity (vectorised inverse-CDF)."""

    def __init__(self, rng: np.random.Generator, item_category: np.ndarray, n_categories: int) -> None:
        n_items = len(item_category)
        weight = (rng.permutation(n_items) + 1.0) ** -ZIPF_EXPONENT
        self.order = np.lexsort((rng.random(n_items), item_category))
        """Items sorted by category (random order inside one)."""
        cats = item_category[self.order]
        self.starts = np.searchsorted(cats, np.arange(n_categories + 1))
        within = np.cumsum(weight[self.order])
        base = np.concatenate([[0.0], within])[self.starts[:-1]]
        totals = within[self.starts[1:] - 1] - base
        self.cumulative = cats + (within - base[cats]) / totals[cats]
        self.cumulative[self.starts[1:] - 1] = np.arange(1, n_categories + 1)
        # The sequel of an item: the next item of its category in `order` (cyclically).
        position = np.arange(n_items)
        following = np.where(position + 1 == self.starts[cats + 1], self.starts[cats], position + 1)
        self.sequel = np.empty(n_items, dtype=np.int64)
        self.sequel[self.order] = self.order[following]

    def draw(self, rng: np.random.Generator, categories: np.ndarray) -> np.ndarray:
        """One item per entry of `categories`, popular items more often."""
        where = np.searchsorted(self.cumulative, categories + rng.random(len(categories)), side="right")
        where = np.clip(where, self.starts[categories], self.starts[categories + 1] - 1)
        return self.order[where]


def _categories(
    rng: np.random.Generator, users: np.ndarray, fraction: np.ndarray, mix: np.ndarray
) -> np.ndarray:
    """The category of each interaction: exploration, the steady favourite, or the drift from the
    early to the late favourite as the user's sequence goes on (`fraction` 0 → 1)."""
    favourites = rng.choice(len(mix), size=(int(users.max()) + 1, 3), p=mix)
    early, late, steady = favourites[users, 0], favourites[users, 1], favourites[users, 2]
    roll = rng.random(len(users))
    drifted = np.where(rng.random(len(users)) < fraction, late, early)
    own = np.where(roll < EXPLORE + (1 - EXPLORE) * STEADY, steady, drifted)
    return np.where(roll < EXPLORE, rng.choice(len(mix), size=len(users), p=mix), own)


def _dedupe(
    rng: np.random.Generator, sampler: _Sampler, users: np.ndarray, items: np.ndarray, n_items: int,
    categories: np.ndarray,
) -> np.ndarray:
    """Redraw every repeat of a (user, item) pair, first in its category, then anywhere."""
    for attempt in range(1000):
        keys = users.astype(np.int64) * n_items + items
        _, first = np.unique(keys, return_index=True)
        repeat = np.ones(len(items), dtype=bool)
        repeat[first] = False
        if not repeat.any():
            return items
        where = np.flatnonzero(repeat)
        if attempt < 5:
            items[where] = sampler.draw(rng, categories[where])
        else:
            items[where] = rng.integers(n_items, size=len(where))
    raise SynthError("could not make every history free of repeats; ask for fewer interactions per user")


def _times(rng: np.random.Generator, offsets: np.ndarray, users: np.ndarray) -> np.ndarray:
    """Increasing epoch seconds per user: a start within three years, then exponential gaps."""
    starts = START + rng.integers(0, 3 * 365 * DAY, size=len(offsets) - 1)
    gaps = np.maximum(1, rng.exponential(4 * DAY, size=len(users)).astype(np.int64))
    total = np.cumsum(gaps)
    before = np.concatenate([[0], total])[offsets[:-1]]
    return starts[users] + total - before[users]


def _pools(
    rng: np.random.Generator, spec: SynthSpec, offsets: np.ndarray, sequence: np.ndarray
) -> dict[int, np.ndarray]:
    """Uniform negatives (items the user never took) for a random `pool_fraction` of the users."""
    count = max(1, round(spec.users * spec.pool_fraction))
    chosen = np.sort(rng.choice(spec.users, size=count, replace=False))
    pools: dict[int, np.ndarray] = {}
    for user in chosen:
        taken = set(sequence[offsets[user] : offsets[user + 1]].tolist())
        picks: dict[int, None] = {}
        while len(picks) < spec.pool:
            for item in rng.integers(spec.items, size=2 * spec.pool).tolist():
                if item not in taken:
                    picks.setdefault(item, None)
        pools[int(user)] = np.fromiter(picks, dtype=np.int64)[: spec.pool]
    return pools


def generate(spec: SynthSpec) -> SynthData:
    """Generate the catalog and every user's sequence (see the module docstring)."""
    spec.check()
    rng = np.random.default_rng(spec.seed)
    n_categories = int(np.clip(round(spec.items / ITEMS_PER_CATEGORY), MIN_CATEGORIES, MAX_CATEGORIES))
    n_categories = min(n_categories, spec.items)
    mix = rng.dirichlet(np.full(n_categories, 2.0))
    item_category = rng.choice(n_categories, size=spec.items, p=mix)
    item_category[:n_categories] = np.arange(n_categories)  # no empty category
    names = category_names(rng, n_categories)
    titles = item_titles(rng, item_category, names)
    sampler = _Sampler(rng, item_category, n_categories)

    lengths = _lengths(rng, spec)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    users = np.repeat(np.arange(spec.users), lengths)
    position = np.arange(len(users)) - offsets[users]
    fraction = position / np.maximum(lengths[users] - 1, 1)
    categories = _categories(rng, users, fraction, mix)
    items = sampler.draw(rng, categories)
    follows = (position > 0) & (rng.random(len(users)) < SEQUEL)
    previous = np.flatnonzero(follows) - 1
    items[follows] = sampler.sequel[items[previous]]
    items = _dedupe(rng, sampler, users, items, spec.items, categories)
    times = _times(rng, offsets, users) if spec.timestamps else None
    pools = _pools(rng, spec, offsets, items) if spec.pool else {}
    return SynthData(spec, titles, item_category, names, offsets, items, times, pools)
