"""What `recgraph recommend` says about where its answer came from: an LLM, or a fallback."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _errors(record: Mapping[str, Any]) -> str:
    errors = record.get("errors") or {}
    return ", ".join(f"{kind} ×{count}" for kind, count in sorted(errors.items())) or "no error recorded"


def fallback_notice(usage: Sequence[Mapping[str, Any]]) -> str | None:
    """One plain sentence when any agent's answer came from its fallback after the LLM failed (None
    when every agent asked an LLM got a usable answer, or when no LLM was asked at all: the heuristic
    backend says so in the title). The graph's last agent writes the ranking, so its fallback is
    named as the ranking's."""
    asked = [r for r in usage if r.get("source", "heuristic") != "heuristic"]
    fell_back = [r for r in asked if r.get("source") == "fallback"]
    if not fell_back:
        return None
    parts = "; ".join(f"{r['agent']} ({_errors(r)})" for r in fell_back)
    sentence = (
        f"FALLBACK: {len(fell_back)} of {len(asked)} agent answers did not come from the LLM but from "
        f"the agents' deterministic fallbacks after every attempt failed: {parts}."
    )
    if asked[-1].get("source") == "fallback":
        sentence += f" The ranking itself is {asked[-1]['agent']}'s fallback ordering, not the LLM's."
    return sentence
