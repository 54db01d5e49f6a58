"""Catalogs of the shapes real data has, written on the fly as RecBole atomic files.

- `full`: titles, years, categories, ratings and timestamps (the reference shape);
- `titles_only`: items have a title and nothing else; interactions are timestamped, no ratings;
- `order_only`: items keep their categories and years, but interactions carry no timestamp
  (the loader falls back to their position and marks the dataset `has_time=False`);
- `titles_and_order`: both at once (the shape of the public sequential Amazon dumps).

Two titles carry HTML entities (`&amp;`, `&#39;`) as scraped catalogs do.
"""

from __future__ import annotations

from pathlib import Path

SHAPES = ("titles_only", "order_only", "titles_and_order")
"""The degraded shapes every registered method must handle."""

ITEMS = [
    ("1", "Moonlight Harbor", "1994", "Drama Romance"),
    ("2", "Iron Comet", "1986", "Action Sci-Fi"),
    ("3", "Laughing Gas", "1991", "Comedy"),
    ("4", "The Quiet Orchard", "1997", "Drama"),
    ("5", "Starfall Legion", "1995", "Action Sci-Fi War"),
    ("6", "Paper Hearts &amp; Stars", "1999", "Comedy Romance"),
    ("7", "Dust and Thunder", "1968", "Western"),
    ("8", "Night Shift Blues", "1993", "Drama Crime"),
    ("9", "Galaxy Drifters", "1980", "Adventure Sci-Fi"),
    ("10", "Holiday Mixup", "1996", "Comedy"),
    ("11", "Silent River", "1992", "Drama Thriller"),
    ("12", "Robot Rebellion", "1998", "Action Sci-Fi"),
    ("13", "Captain&#39;s Log", "1984", "Adventure"),
    ("14", "Velvet Static", "1990", "Crime Thriller"),
]
# user -> items in order; the last two are the validation and test interactions.
HISTORIES = {
    "a": ["1", "4", "8", "11", "6", "4", "2", "9"],
    "b": ["2", "5", "12", "9", "2", "3", "1", "7"],
    "c": ["3", "10", "6", "3", "1", "4", "12", "5"],
    "d": ["7", "2", "5", "9", "12", "8", "11", "10"],
    "e": ["6", "1", "11", "4", "3", "10", "7", "2"],
    "f": ["8", "11", "1", "4", "5", "2", "6", "3"],
    "g": ["13", "14", "9", "2", "13", "5", "14", "12"],
}
CANDIDATES = {
    "a": ["9", "3", "7", "12", "5"],
    "b": ["7", "10", "13", "6", "14"],
    "c": ["5", "2", "9", "14", "7"],
}
"""A few users and candidate lists (each holds the user's test item) the shape test ranks."""


def write_shape(folder: Path, shape: str, name: str = "shape") -> Path:
    """Write the catalog in `shape` (one of `SHAPES` or `full`) and return its folder."""
    if shape not in (*SHAPES, "full"):
        raise ValueError(f"unknown shape {shape!r}")
    folder.mkdir(parents=True, exist_ok=True)
    titles_only = shape in ("titles_only", "titles_and_order")
    timestamps = shape in ("titles_only", "full")
    if titles_only:
        header = "item_id:token\ttitle:token_seq"
        rows = [f"{item}\t{title}" for item, title, _, _ in ITEMS]
    else:
        header = "item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"
        rows = ["\t".join(row) for row in ITEMS]
    (folder / f"{name}.item").write_text("\n".join([header, *rows]) + "\n")
    columns = ["user_id:token", "item_id:token"]
    columns += ["rating:float"] if shape == "full" else []
    columns += ["timestamp:float"] if timestamps else []
    inter = ["\t".join(columns)]
    for user, items in HISTORIES.items():
        for n, item in enumerate(items):
            row = [user, item]
            row += ["4"] if shape == "full" else []
            row += [str(86_400 * (n + 1))] if timestamps else []
            inter.append("\t".join(row))
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder
