"""Where recgraph keeps caches (embeddings, Chroma indexes, trained models)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from world.data import Dataset


def cache_root() -> Path:
    """`$RECGRAPH_HOME` (when set and not empty), else `~/.cache/recgraph`."""
    root = Path(os.environ.get("RECGRAPH_HOME") or Path.home() / ".cache" / "recgraph")
    root.mkdir(parents=True, exist_ok=True)
    return root


def dataset_key(dataset: Dataset) -> str:
    """A filesystem- and Chroma-safe key unique to a dataset's name and source."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", dataset.name).strip("-")[:40] or "dataset"
    digest = hashlib.sha256(dataset.source.encode()).hexdigest()[:8]
    return f"{slug}-{digest}"


def dataset_cache(dataset: Dataset) -> Path:
    """The cache folder of one dataset."""
    folder = cache_root() / dataset_key(dataset)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
