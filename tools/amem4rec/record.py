"""One pool memory as a record, the text it embeds, and its vector codec (AMEM4Rec's pool).

Contract: a memory's vector depends on its text alone (each text is encoded on its own:
`world.vector_memo`), so a resumed run sees exactly the vectors an uninterrupted one saw;
vectors travel as base64 float32.
"""

from __future__ import annotations

import base64
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Memory:
    """One pattern memory m = (p, e) with its bookkeeping."""

    id: str
    """Stable id, from the window that created it."""
    behavior_explanation: str
    """Abstract tendencies (no item names)."""
    pattern_description: str
    """Interaction structure: sequences, repetitions, co-occurrences."""
    evolution_count: int
    """How many evolutions rewrote it."""
    version: int
    """1 when created, +1 per evolution (the compare-and-set key)."""
    created_user: str
    """The user whose window created it."""
    created_window: str
    """That window's key, `<user>:<start>`."""
    created_at: float
    """Seconds since the epoch when stored."""
    updated_at: float
    """Seconds since the epoch of the last evolution (= created_at before any)."""

    def text(self) -> str:
        """What is embedded: the behaviour explanation and the pattern description."""
        return memory_text(self.behavior_explanation, self.pattern_description)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields."""
        return asdict(self)


def memory_text(behavior: str, pattern: str) -> str:
    """The text e = Encode(p) embeds."""
    return f"{behavior.strip()} {pattern.strip()}".strip()


def encode_vector(vector: np.ndarray) -> str:
    """A float32 vector as base64 text (JSON-safe, exact)."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()


def decode_vector(text: str | bytes) -> np.ndarray:
    """The inverse of `encode_vector` (also accepts raw float32 bytes)."""
    raw = base64.b64decode(text) if isinstance(text, str) else text
    return np.frombuffer(raw, dtype="<f4").copy()
