"""Seeded randomness that depends on (seed, user, purpose) only, never on run order."""

from __future__ import annotations

import hashlib

import numpy as np


def user_rng(seed: int, user_id: str, purpose: str = "candidates") -> np.random.Generator:
    """An RNG determined by (seed, user, purpose) only — never by run order or concurrency."""
    digest = hashlib.sha256(f"{seed}\x1f{user_id}\x1f{purpose}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))
