"""Shared fixtures: offline environment, a cache folder, and small datasets written on the fly."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data" / "amazon-cds-100"
requires_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason=f"needs the shared Amazon CDs data at {SHARED_DATA}, which is absent"
)
"""Marks a test that reads `SHARED_DATA` (skipped with this reason on a machine without it)."""

os.environ.setdefault("RECGRAPH_HOME", str(REPO / ".cache" / "test-home"))
for key, value in {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "ANONYMIZED_TELEMETRY": "False",
}.items():
    os.environ[key] = value
os.environ.pop("OPENAI_API_KEY", None)

TINY_ITEMS = [
    ("1", "Alpha Wars", "1977", "Action Sci-Fi"),
    ("2", "Beta Love", "1990", "Romance Comedy"),
    ("3", "Gamma Quest", "1981", "Action Adventure"),
    ("4", "Delta Laughs", "1995", "Comedy"),
    ("5", "Epsilon Drama", "1996", "Drama"),
    ("6", "Zeta Space", "1979", "Sci-Fi"),
]
# user -> [(item, timestamp)], deliberately out of time order in the file.
TINY_EVENTS = {
    "u1": [("3", 300), ("1", 100), ("6", 200), ("4", 400)],
    "u2": [("1", 100), ("3", 200), ("6", 300)],
    "u3": [("2", 100), ("4", 200), ("5", 300), ("2", 400)],
    "u4": [("5", 100), ("2", 200)],
}


def write_tiny_atomic(folder: Path, name: str = "tiny") -> Path:
    """Write a six-item, four-user RecBole atomic dataset and return its folder."""
    folder.mkdir(parents=True, exist_ok=True)
    items = ["item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq"]
    items += ["\t".join(row) for row in TINY_ITEMS]
    (folder / f"{name}.item").write_text("\n".join(items) + "\n")
    inter = ["user_id:token\titem_id:token\trating:float\ttimestamp:float"]
    for user, events in TINY_EVENTS.items():
        inter += [f"{user}\t{item}\t4\t{ts}" for item, ts in events]
    (folder / f"{name}.inter").write_text("\n".join(inter) + "\n")
    return folder


@pytest.fixture
def tiny_dataset_dir(tmp_path: Path) -> Path:
    """A tiny RecBole atomic dataset folder."""
    return write_tiny_atomic(tmp_path / "tiny")
