"""Formatting shared by every prompt: how items, histories and candidates are shown."""

from __future__ import annotations

from collections.abc import Sequence

from world.data import Dataset

CANDIDATES_HEADER = "Candidates (id in square brackets):"


def item_line(dataset: Dataset, item_id: str, max_chars: int = 160) -> str:
    """`[id] Title (year) — category, category`, cut to `max_chars`."""
    item = dataset.items[item_id]
    year = item.attributes.get("year")
    text = f"[{item_id}] {item.title}" + (f" ({year})" if year else "")
    if item.categories:
        text += " — " + ", ".join(item.categories[:4])
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def item_block(dataset: Dataset, item_ids: Sequence[str]) -> str:
    """One item line per id."""
    return "\n".join(item_line(dataset, i) for i in item_ids) or "(none)"


def candidates_block(dataset: Dataset, item_ids: Sequence[str]) -> str:
    """The candidate list under its header (the simulator and parsers rely on the header)."""
    return f"{CANDIDATES_HEADER}\n{item_block(dataset, item_ids)}"
