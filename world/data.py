"""The canonical data model every loader returns and every method reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Item:
    """A catalog item."""

    id: str
    """Item id as a string token (ids are opaque; never assume integers)."""
    title: str
    """Human-readable title."""
    categories: tuple[str, ...] = ()
    """Genres / categories, most specific last when the source orders them."""
    description: str | None = None
    """Free-text description when the source has one."""
    attributes: dict[str, str] = field(default_factory=dict, hash=False, compare=False)
    """Anything else the source carries (year, brand, author, price, ...)."""
    structured: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    """List and object fields in the source's own shapes, never flattened to text (Goodreads `authors`
    as `{"author_id", "role"}` objects, Yelp `hours` as day -> "H:M-H:M", Amazon `details`, ...)."""

    def text(self) -> str:
        """The item's text T(i) used for embeddings and prompts."""
        parts = [self.title]
        if self.categories:
            parts.append("Categories: " + ", ".join(self.categories))
        if year := self.attributes.get("year"):
            parts.append(f"Year: {year}")
        if self.description:
            parts.append(self.description)
        return ". ".join(parts)


@dataclass(frozen=True, slots=True)
class Interaction:
    """One user-item event."""

    user_id: str
    """Who."""
    item_id: str
    """What."""
    timestamp: float
    """Seconds since the epoch; the position in the sequence when the source has no time."""
    rating: float | None = None
    """Explicit rating, when the source has one."""
    review: str | None = None
    """Review text, when the source has one."""


@dataclass(frozen=True, slots=True)
class PresplitUser:
    """A user whose split (and optionally candidates) the dataset already fixes."""

    history: tuple[str, ...]
    """Training history, oldest first."""
    valid: str | None
    """Validation / warm-up target."""
    target: str
    """Test target."""
    candidates: tuple[str, ...] | None = None
    """Pre-generated candidate pool (may or may not contain the target)."""


@dataclass
class Dataset:
    """A whole dataset in the canonical model."""

    name: str
    """Short name used in reports and cache paths."""
    items: dict[str, Item]
    """Catalog by item id."""
    interactions: list[Interaction]
    """All interactions (unsorted as loaded)."""
    has_time: bool = True
    """False when timestamps are only positions (evolving scenarios are then refused)."""
    users: dict[str, dict[str, str]] = field(default_factory=dict)
    """Optional user attributes by user id."""
    instructions: dict[str, str] = field(default_factory=dict)
    """Optional natural-language request per user (InstructRec-style)."""
    presplit: dict[str, PresplitUser] | None = None
    """When the source fixes the split itself (sequential layout, task files, MIND)."""
    pool_source: str = "auto"
    """The `--candidate-source` whose negatives come from `presplit`'s candidate pools: `auto` (the
    dataset's own candidate sets, the default source) or `impressions` (MIND's loader: the news shown
    with the user's last click, drawn only when asked; the default then samples from the catalog)."""
    source: str = ""
    """Where it was loaded from (a folder or file path)."""
    filtered: str = ""
    """What the filters applied after loading kept, in words (`world.filters`; empty: none)."""
    cases_from: str = ""
    """Where the evaluation cases come from, in words, when the data fixes them per scenario (an
    AgentRecBench task folder: world/loaders/agentrecbench.py, its writer); empty: recgraph's
    scenario rules (world/scenarios.py) choose them and what each user sees."""

    def user_ids(self) -> list[str]:
        """Every user with at least one interaction or a fixed split, in a stable order."""
        ids = {i.user_id for i in self.interactions}
        if self.presplit:
            ids.update(self.presplit)
        return sorted(ids, key=natural_key)


def natural_key(token: str) -> tuple[int, int | str]:
    """Sort key putting numeric ids in numeric order and the rest after, lexically."""
    return (0, int(token)) if token.isdigit() else (1, token)
