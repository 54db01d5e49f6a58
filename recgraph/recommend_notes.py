"""What `recgraph recommend` says about where its answer came from: an LLM, a fallback, or repair."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def _errors(record: Mapping[str, Any]) -> str:
    errors = record.get("errors") or {}
    return ", ".join(f"{kind} ×{count}" for kind, count in sorted(errors.items())) or "no error recorded"


def repair_notice(usage: Sequence[Mapping[str, Any]]) -> str | None:
    """One sentence when the model's ranking named only some candidates and validation appended the
    rest in the seeded left-out order (None when the model placed every one, or no LLM ranked)."""
    ranker = next((r for r in reversed(usage) if r.get("ranking_origin")), None)
    origin = (ranker or {}).get("ranking_origin") or {}
    if origin.get("source") != "llm" or not origin["all"]["repair"]:
        return None
    every, top5 = origin["all"], origin["top5"]
    return (
        f"REPAIR: the model placed {every['model']} of the {sum(every.values())} ranked items "
        f"({top5['model']} of the top {sum(top5.values())}); validation appended the other "
        f"{every['repair']} in {ranker['agent']}'s fallback order."
    )


def fallback_notice(usage: Sequence[Mapping[str, Any]]) -> str | None:
    """Plain sentences when any agent's answer came from its fallback after the LLM failed, and when
    the ranking's model named only part of it (`repair_notice`). None when every agent asked an LLM
    got a usable, complete answer, or when no LLM was asked at all: the heuristic backend says so in
    the title. The graph's last agent writes the ranking, so its fallback is named as the ranking's."""
    asked = [r for r in usage if r.get("source", "heuristic") != "heuristic"]
    fell_back = [r for r in asked if r.get("source") == "fallback"]
    repaired = repair_notice(usage)
    if not fell_back:
        return repaired
    parts = "; ".join(f"{r['agent']} ({_errors(r)})" for r in fell_back)
    sentence = (
        f"FALLBACK: {len(fell_back)} of {len(asked)} agent answers did not come from the LLM but from "
        f"the agents' deterministic fallbacks after every attempt failed: {parts}."
    )
    if asked[-1].get("source") == "fallback":
        sentence += f" The ranking itself is {asked[-1]['agent']}'s fallback ordering, not the LLM's."
    return f"{sentence} {repaired}" if repaired else sentence
