"""The trained baselines' blackboard state: the common one plus their per-user fallback counts."""

from __future__ import annotations

from typing import Any

from state.base_state import BaseState


class TrainedState(BaseState, total=False):
    """SASRec, GRU4Rec and LightGCN (graphs/baselines/trained.py)."""

    details: dict[str, Any]
    """Written by `<name>_ranker`: `cold_user` (1 when the popularity fallback ranked) and
    `cold_candidates` (candidates with no training interaction, ranked after the warm ones)."""
