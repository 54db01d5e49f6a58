"""What the trained baselines (SASRec, GRU4Rec, LightGCN) share: their training data, cache files,
seeded torch sessions and the cold-start fallback.

- Training data: each split user's training history only (`UserCase.history`, oldest first); the
  validation interaction is kept apart, as the target the best epoch is chosen on (at most
  `VALIDATION_USERS` users' targets, a seeded sample on a larger catalog: `validation_sample`); the
  test target is never read.
- Cache: `$RECGRAPH_HOME/<dataset>/<model>-<knobs>-<digest>.pt`, the digest over the training
  sequences, the validation targets, the library's version and the seed, so another split, other
  knobs or another library version train anew, and a rerun reads the saved weights back exactly.
- Fallback: a candidate nobody interacted with in training (a cold item) has an untrained embedding;
  it is ranked after every warm candidate, in the order given (all have popularity 0). A user whose
  visible history has no warm item (a cold user) gets the popularity order. Both are counted in
  each user's `details` (`cold_user`, `cold_candidates`).
"""

from __future__ import annotations

import hashlib
import os
import random
import resource
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from agents.baselines.classic import popularity_scores
from state.baselines.context import BaselinesContext
from world.environment import Environment
from world.paths import dataset_cache


@dataclass(frozen=True)
class TrainingData:
    """The interactions a trained baseline may learn from, as catalog rows (`env.item_index`)."""

    sequences: dict[str, list[int]]
    """Split user -> their training items, oldest first (validation and test targets left out)."""
    validation: dict[str, int]
    """Split user -> their validation item (chooses the epoch kept; never a training positive): every
    split user with one, or a seeded sample of `VALIDATION_USERS` of them (`validation_sample`)."""

    @cached_property
    def digest(self) -> str:
        """A fingerprint of every sequence and validation target, in user order."""
        digest = hashlib.sha256()
        for user in sorted(self.sequences):
            digest.update(f"{user}:{self.sequences[user]}:{self.validation.get(user)};".encode())
        return digest.hexdigest()[:16]


VALIDATION_USERS = 2048
"""Most users whose validation targets choose the epoch kept. Scoring every user against the whole
catalog each epoch dominated training on a large catalog (50k users x 17k items: cornac's check took
~0.3 CPU s per 100 users, i.e. minutes per epoch); a catalog with at most this many users (ml-100k's
943) keeps every target, so its training is unchanged."""
VALIDATION_SEED = 0
"""Seed of the validation sample (fixed: every trained baseline and every seed checks the same
users)."""


def validation_sample(validation: dict[str, int], size: int | None = None) -> dict[str, int]:
    """`validation` itself when it has at most `size` (default `VALIDATION_USERS`) users, else `size`
    of them drawn without replacement by `VALIDATION_SEED`, kept in their original order."""
    size = VALIDATION_USERS if size is None else size
    if len(validation) <= size:
        return validation
    users = list(validation)
    chosen = np.sort(np.random.default_rng(VALIDATION_SEED).choice(len(users), size, replace=False))
    return {users[k]: validation[users[k]] for k in chosen}


def training_data(env: Environment) -> TrainingData:
    """Each split user's training history and validation target, from the dataset's split (built once
    per environment: every trained baseline reads the same)."""

    def build() -> TrainingData:
        index = env.item_index
        sequences = {user: [index[e.item_id] for e in case.history] for user, case in env.cases.items()}
        validation = {user: index[case.valid.item_id] for user, case in env.cases.items() if case.valid}
        return TrainingData(sequences, validation_sample(validation))

    return env.resource("baselines:training_data", build)


def knobs(name: str, ctx: BaselinesContext) -> dict[str, Any]:
    """Trained baseline `name`'s own knobs (its `<name>_` fields, prefix removed) and the seed: its
    cache key and its library settings."""
    prefix = f"{name}_"
    own = {k.removeprefix(prefix): v for k, v in vars(ctx).items() if k.startswith(prefix)}
    return {**own, "seed": ctx.seed}


def library_version(model: str) -> str:
    """The version tag of the library that trains `model` (part of its cache key)."""
    if model == "lightgcn":
        import torch_geometric

        return f"torch_geometric-{torch_geometric.__version__}"
    import cornac

    return f"cornac-{cornac.__version__}"


def cache_path(env: Environment, model: str, knobs: dict[str, Any], version: str, data: TrainingData) -> Path:
    """Where `model` trained with `knobs` (seed included) by `version` of its library on `data` is kept."""
    settings = ",".join(f"{k}={v}" for k, v in sorted(knobs.items()))
    key = hashlib.sha256(f"{settings}|{version}|{data.digest}".encode()).hexdigest()[:16]
    return dataset_cache(env.dataset) / f"{model}-{key}.pt"


def save_checkpoint(path: Path, payload: dict[str, Any]) -> None:
    """`torch.save` through a temporary file of this process: a killed run leaves no half file."""
    import torch

    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    torch.save(payload, temporary)
    temporary.replace(path)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """A checkpoint written by `save_checkpoint` (tensors, numbers and strings only)."""
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)


TRAIN_THREADS = 1
"""torch threads while training: fixed, so that the same data and knobs give the same weights on any
machine (how a sum is split over threads changes its last bits). One: on a busy machine two threads
spent most of their time waiting for each other (LightGCN's small sparse steps ran ~5x slower)."""


@contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """Seed torch, numpy's and Python's global generators, fix torch's threads (`TRAIN_THREADS`) and
    ask torch for deterministic kernels; the global numpy/Python states, the thread count and the
    determinism flag are restored afterwards (cornac's GRU4Rec reseeds numpy's global generator)."""
    import torch

    numpy_state, python_state = np.random.get_state(), random.getstate()
    deterministic, threads = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    torch.set_num_threads(TRAIN_THREADS)
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support.*")
            warnings.filterwarnings("ignore", message=".*[Ss]parse invariant checks.*")
            yield
    finally:
        torch.use_deterministic_algorithms(deterministic)
        torch.set_num_threads(threads)
        np.random.set_state(numpy_state)
        random.setstate(python_state)


def warm_mask(env: Environment, items: Sequence[str]) -> np.ndarray:
    """True for the items with at least one training interaction."""
    return popularity_scores(env, items) > 0


def with_cold_fallback(env: Environment, items: Sequence[str], scores: np.ndarray) -> np.ndarray:
    """`scores` with every cold item moved below every warm one (they keep the given order)."""
    warm = warm_mask(env, items)
    adjusted = np.asarray(scores, dtype=np.float64).copy()
    if warm.all():
        return adjusted
    floor = adjusted[warm].min() if warm.any() else 0.0
    adjusted[~warm] = floor - 1.0
    return adjusted


def cold_details(env: Environment, items: Sequence[str], cold_user: bool) -> dict[str, int]:
    """Per-user fallback counts: whether the popularity order was used, and the cold candidates."""
    return {"cold_user": int(cold_user), "cold_candidates": int((~warm_mask(env, items)).sum())}


def resident_mb() -> float:
    """This process's resident set now, in MB (`/proc/self/statm`; the peak so far where there is no
    /proc)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class MemoryWatch:
    """The resident set while a model trains, sampled every `interval` seconds by a daemon thread:
    the process's peak *during* training, which the process-wide high-water mark (`ru_maxrss`) cannot
    give once an earlier step (MiniLM, another model) went higher."""

    interval: float = 0.05
    """Seconds between samples."""
    start_mb: float = 0.0
    """Resident MB when training started."""
    peak_mb: float = 0.0
    """Highest resident MB sampled while training."""
    cpu_seconds: float = 0.0
    """CPU seconds this process spent while training (every thread): on a loaded machine the wall
    time measures the other processes too, this does not."""

    def __enter__(self) -> MemoryWatch:
        self.start_mb = self.peak_mb = resident_mb()
        self._cpu = time.process_time()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name="rss-watch", daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_mb = max(self.peak_mb, resident_mb())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak_mb = max(self.peak_mb, resident_mb())
        self.cpu_seconds = time.process_time() - self._cpu

    def figures(self) -> dict[str, float]:
        """metrics.json's `training` fields: resident MB at the start, the peak, the growth, and the
        CPU seconds."""
        return {
            "cpu_seconds": round(self.cpu_seconds, 2),
            "rss_start_mb": round(self.start_mb, 1),
            "peak_rss_mb": round(self.peak_mb, 1),
            "rss_growth_mb": round(self.peak_mb - self.start_mb, 1),
        }
