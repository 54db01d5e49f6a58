"""A catalog's MiniLM item vectors, embedded only when first needed and kept on disk.

A 300-user run touches the candidates and histories of 300 users, not a 17k-item catalog: rows are
embedded on first access, in chunks, and written to a memory-mapped file under the dataset's cache
folder keyed by the dataset (name and source) and a fingerprint of every item's text, so the next
run — or the next method — reuses them, and a killed run keeps what it had done. Once every row is
there, the file is renamed to the complete cache `item_embeddings-<fingerprint>.npy`.

Callers index it like the matrix it stands for (`vectors[[rows]]`, `vectors[row]`, a slice);
`np.asarray(vectors)` embeds whatever is missing and gives the whole matrix.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from world.data import Dataset
from world.embeddings import EMBEDDING_DIM, embed_texts
from world.paths import dataset_cache
from world.progress import end, report

CHUNK = 512
"""Rows embedded (and written) per step."""
MODEL_TAG = "all-MiniLM-L6-v2"
PROGRESS_LABEL = "item vectors"
"""The progress row's label (rows on disk of the catalog's total)."""


def text_fingerprint(texts: Sequence[str]) -> str:
    """A short digest of the item texts (what the vectors depend on)."""
    return hashlib.sha256("\x1e".join(texts).encode()).hexdigest()[:16]


def save_array(path: Path, array: np.ndarray) -> None:
    """`np.save` to `path` through a temporary file of this process and thread, so a crash never
    leaves half an array there and two writers never rename each other's file."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp.npy")
    np.save(temporary, array)
    temporary.replace(path)


def save_arrays(path: Path, **arrays: np.ndarray) -> None:
    """`np.savez` of named arrays to `path` through a temporary file of this process, so a crash
    never leaves half an archive there."""
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with temporary.open("wb") as handle:
        np.savez(handle, **arrays)
    temporary.replace(path)


class ItemVectors:
    """Row i is the L2-normalised MiniLM embedding of `item_ids[i]`'s text (see the module docstring)."""

    def __init__(self, dataset: Dataset, item_ids: Sequence[str]) -> None:
        """Open the dataset's cache for these items' texts (nothing is embedded yet)."""
        self.texts = [dataset.items[i].text() for i in item_ids]
        self.shape = (len(self.texts), EMBEDDING_DIM)
        self.dtype = np.dtype(np.float32)
        self.ndim = 2
        stem = f"item_embeddings-{text_fingerprint(self.texts)}"
        folder = dataset_cache(dataset)
        self.path = folder / f"{stem}.npy"
        self._partial = folder / f"{stem}.partial.npy"
        self._mask_path = folder / f"{stem}.mask.npy"
        self._lock = threading.Lock()
        self._mask: np.ndarray | None = None
        complete = self._complete_file()
        if complete is not None:
            self._data: np.ndarray = complete
            return
        self._open_partial()

    def _complete_file(self) -> np.ndarray | None:
        """The complete cache, memory-mapped, when it is on disk with this catalog's shape."""
        if not self.path.is_file():
            return None
        complete = np.load(self.path, mmap_mode="r")
        return complete if complete.shape == self.shape else None

    def _open_partial(self) -> None:
        data = None
        if self._partial.is_file():
            data = np.lib.format.open_memmap(self._partial, mode="r+")
            if data.shape != self.shape or data.dtype != self.dtype:
                data = None
        mask = np.load(self._mask_path) if data is not None and self._mask_path.is_file() else None
        if data is None:
            data = np.lib.format.open_memmap(self._partial, mode="w+", dtype=self.dtype, shape=self.shape)
        if mask is None or mask.shape != (self.shape[0],):
            mask = np.zeros(self.shape[0], dtype=bool)
        self._data, self._mask = data, mask

    def __len__(self) -> int:
        """Catalog size."""
        return self.shape[0]

    def cached(self) -> int:
        """Rows already on disk."""
        return self.shape[0] if self._mask is None else int(self._mask.sum())

    def ready(self, rows: np.ndarray) -> bool:
        """True when every row of `rows` is on disk (reading them embeds and writes nothing)."""
        mask = self._mask
        return mask is None or bool(mask[rows].all())

    def __getitem__(self, key: Any) -> np.ndarray:
        """Rows as an array (embedding the missing ones first), indexed like a numpy matrix."""
        rows = np.atleast_1d(np.arange(self.shape[0])[key if not isinstance(key, tuple) else key[0]])
        self.ensure(rows)
        return np.array(self._data[key])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The whole matrix (every missing row embedded first)."""
        self.ensure(np.arange(self.shape[0]))
        return np.array(self._data, dtype=dtype)  # a copy: the file may be replaced later

    def __matmul__(self, other: Any) -> np.ndarray:
        """The whole matrix times `other`."""
        return np.asarray(self) @ other

    def ensure(self, rows: np.ndarray) -> None:
        """Embed and store every row of `rows` not on disk yet (thread-safe; chunks of `CHUNK`)."""
        if self._mask is None:
            return
        with self._lock:
            mask = self._mask
            if mask is None:
                return
            missing = np.unique(rows[~mask[rows]])
            if len(missing):  # another process may have put them on disk since this one looked
                mask = self._take_up_disk(mask)
                if mask is None:
                    return
                missing = np.unique(rows[~mask[rows]])
            if not len(missing):
                return
            # The row's total is what this call embeds (rows already on disk and the ones asked
            # for), usually short of the catalog: only the rows a run reads are embedded.
            total = int(mask.sum()) + len(missing)
            report(PROGRESS_LABEL, int(mask.sum()), total)
            for start in range(0, len(missing), CHUNK):
                chunk = missing[start : start + CHUNK]
                self._data[chunk] = embed_texts([self.texts[i] for i in chunk])
                self._data.flush()  # type: ignore[attr-defined]
                mask[chunk] = True
                save_array(self._mask_path, mask)
                report(PROGRESS_LABEL, int(mask.sum()), total)
            end(PROGRESS_LABEL)
            if mask.all():
                if self._partial.is_file():  # another process (bench --workers) may have renamed it
                    self._partial.replace(self.path)
                self._mask_path.unlink(missing_ok=True)
                self._mask = None

    def _take_up_disk(self, mask: np.ndarray) -> np.ndarray | None:
        """Take up the rows other processes wrote since this object read the cache (`bench --workers`
        embeds the run's rows in a step process of its own while the parent already holds the
        catalog's vectors): the complete file when one was renamed into place (returns None), else
        the rows the mask file marks, added to this object's `mask`. Called under the lock."""
        complete = self._complete_file()
        if complete is not None:
            self._data, self._mask = complete, None
            return None
        on_disk = np.load(self._mask_path) if self._mask_path.is_file() else None
        if on_disk is not None and on_disk.shape == mask.shape and (on_disk & ~mask).any():
            # the same partial file, mapped shared: the other process's rows are in this mapping
            self._mask = mask | on_disk
        return self._mask


def item_embeddings(dataset: Dataset, item_ids: Sequence[str]) -> np.ndarray:
    """Embeddings of `item_ids` (in that order), cached per dataset and text fingerprint (the whole
    matrix; `ItemVectors` embeds rows only as they are needed)."""
    return np.asarray(ItemVectors(dataset, item_ids))
