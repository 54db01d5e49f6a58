"""What every tool of the Tool Agent Library shares: the episode it works in, what it fetched, the
agent task (prompt, one output schema, validation/repair, deterministic fallback) and the memory
entry it writes.

A tool agent = a `ToolSpec` (catalog.py) + a fetch function: `fetch(episode) -> Fetched` reads the
environment through the environment tools only and computes the deterministic answer from exactly
that data; the LLM sees the same data (quoted) and answers `ToolOutput`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agents.base import AgentResult, AgentTask, InvalidAnswer
from agents.chainrec.online.catalog import ToolSpec
from agents.ranking import clip_score
from agents.validation import constrained_schema
from prompts import chainrec as prompts
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import (
    FACET_KEY_CHARS,
    FACET_VALUE_CHARS,
    MAX_FACETS,
    NOTE_CHARS,
    SUMMARY_CHARS,
    Facet,
    ItemEvidence,
    ToolOutput,
)
from state.chainrec.state import MemoryEntry
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import Environment

ITEM_ANSWER_TOKENS = (160, 32)
"""Output tokens an item tool's answer needs: a base plus this many per candidate."""


@dataclass(frozen=True)
class Episode:
    """What a tool agent works from: S_t = (u, I_cand, M_t), the run's knobs and the environment."""

    scope: EpisodeScope
    """The episode's user and scenario, bound to the environment tools."""
    candidates: tuple[str, ...]
    """I_cand."""
    memory: tuple[MemoryEntry, ...]
    """M_t: what earlier tools wrote."""
    ctx: ChainRecContext
    """The run's knobs."""

    @property
    def env(self) -> Environment:
        """The dataset's environment."""
        return self.scope.env

    @property
    def domain(self) -> Mapping[str, bool]:
        """What the dataset carries (ratings, reviews, categories, timestamps, authors, locations)."""
        return self.scope.corpus.domain


@dataclass
class Fetched:
    """What a tool fetched, as prompt text, and the answer it gives without an LLM."""

    data: str
    """The fetched data rendered for the prompt (item and user text quoted as data)."""
    fallback: ToolOutput
    """The deterministic answer computed from exactly that data."""
    stats: dict[str, float] = field(default_factory=dict)
    """Counts describing the fetch (written to the memory entry; the rule planner reads them)."""
    candidates: tuple[str, ...] = ()
    """Item tools: the candidates the answer must cover (one entry each); empty for user tools."""
    needed: bool = True
    """False when nothing was fetched worth asking a model about: the fallback answers, no call."""
    notes: tuple[str, ...] = ()
    """What the tool switched off for a missing field (traced)."""
    evidence: tuple[str, ...] = ()
    """User tools: the items the facets are about (written to the memory entry)."""


FetchFn = Callable[[Episode], Fetched]


def facet(key: str, value: str) -> Facet:
    """A facet, cut to the schema's lengths."""
    return Facet(key=key[:FACET_KEY_CHARS], value=value[:FACET_VALUE_CHARS])


def _clean_facets(facets: Sequence[Facet], repairs: list[str]) -> list[Facet]:
    kept: dict[str, Facet] = {}
    for raw in facets:
        key, value = " ".join(raw.key.split()), " ".join(raw.value.split())
        if not key or not value:
            repairs.append("empty_facet")
        elif key.lower() in kept:
            repairs.append("duplicate_facet")
        elif len(kept) >= MAX_FACETS:
            repairs.append("extra_facet")
        else:
            kept[key.lower()] = facet(key, value)
    return list(kept.values())


def _clean_items(
    items: Sequence[ItemEvidence], candidates: Sequence[str], fallback: ToolOutput, repairs: list[str]
) -> list[ItemEvidence]:
    allowed, kept = set(candidates), {}
    for entry in items:
        item = str(entry.item_id).strip()
        if item not in allowed:
            repairs.append("unknown_id")
        elif item in kept:
            repairs.append("duplicate_id")
        elif not math.isfinite(entry.score):
            repairs.append("invalid_score")
        else:
            score, clipped = clip_score(float(entry.score), 0.0, 1.0)
            repairs += ["score_clipped"] if clipped else []
            kept[item] = ItemEvidence(
                item_id=item, score=score, note=" ".join(entry.note.split())[:NOTE_CHARS]
            )
    if not kept:
        raise InvalidAnswer(
            "no entry in 'items' names a candidate; use the ids in square brackets", "no_valid_ids"
        )
    backup = {entry.item_id: entry for entry in fallback.items}
    for item in candidates:
        if item not in kept:
            repairs.append("missing_id")
            kept[item] = backup[item]
    return [kept[c] for c in candidates]


def validate_tool_output(
    answer: ToolOutput, candidates: Sequence[str], fallback: ToolOutput
) -> tuple[ToolOutput, list[str]]:
    """Repair a tool's answer: facets cleaned, confidence and scores clipped, per-candidate entries
    made exactly one per candidate (unknown/duplicate ids dropped, missing ones from the fallback).
    Raises `InvalidAnswer` when nothing usable is left."""
    repairs: list[str] = []
    if not math.isfinite(answer.confidence):
        raise InvalidAnswer("'confidence' must be a number from 0 to 1", "invalid_confidence")
    confidence, clipped = clip_score(float(answer.confidence), 0.0, 1.0)
    repairs += ["confidence_clipped"] if clipped else []
    facets = _clean_facets(answer.facets, repairs)
    summary = " ".join(answer.summary.split())[:SUMMARY_CHARS]
    if not facets and not summary:
        raise InvalidAnswer("the answer has neither facets nor a summary", "empty_answer")
    if candidates:
        items = _clean_items(answer.items, candidates, fallback, repairs)
    else:
        items = []
        repairs += ["unexpected_items"] if answer.items else []
    return ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items), repairs


def tool_output_schema(candidates: Sequence[str]) -> dict[str, Any]:
    """`ToolOutput` as sent to a model: bounded facets, confidence and scores in [0, 1]; item tools
    answer exactly one entry per candidate (ids as an enum of them); user tools are not asked for
    `items` at all (an empty id array would still look id-bearing to a grammar or a simulator)."""
    constraints: dict[str, dict[str, Any]] = {
        "facets": {"minItems": 1, "maxItems": MAX_FACETS},
        "facets[].key": {"maxLength": FACET_KEY_CHARS},
        "facets[].value": {"maxLength": FACET_VALUE_CHARS},
        "confidence": {"minimum": 0, "maximum": 1},
        "summary": {"maxLength": SUMMARY_CHARS},
    }
    if candidates:
        constraints["items"] = {"minItems": len(candidates), "maxItems": len(candidates)}
        constraints["items[].item_id"] = {"enum": list(candidates)}
        constraints["items[].score"] = {"minimum": 0, "maximum": 1}
        constraints["items[].note"] = {"maxLength": NOTE_CHARS}
    schema = constrained_schema(ToolOutput, constraints)
    if not candidates:
        del schema["properties"]["items"]
        schema["required"].remove("items")
    return schema


def tool_task(spec: ToolSpec, fetched: Fetched, episode: Episode) -> AgentTask[ToolOutput]:
    """The agent task of one tool call (role "rec")."""
    digest = prompts.memory_digest(episode.memory) if spec.side == "item" else ""
    messages = prompts.tool_messages(spec.name, spec.description, fetched.data, digest, spec.side == "item")

    def validate(answer: ToolOutput) -> tuple[ToolOutput, list[str]]:
        return validate_tool_output(answer, fetched.candidates, fetched.fallback)

    schema = tool_output_schema(fetched.candidates)
    return AgentTask(
        agent=spec.node,
        role="rec",
        messages=messages,
        schema=ToolOutput,
        validate=validate,
        fallback=lambda: fetched.fallback,
        json_schema=schema,
    )


def answer_context(ctx: ChainRecContext, fetched: Fetched) -> ChainRecContext | None:
    """A context whose output-token cap fits one entry per candidate (None: the run's is enough)."""
    base, per_item = ITEM_ANSWER_TOKENS
    needed = base + per_item * len(fetched.candidates)
    return replace(ctx, max_output_tokens=needed) if needed > ctx.max_output_tokens else None


def memory_entry(spec: ToolSpec, result: AgentResult[ToolOutput], fetched: Fetched, step: int) -> MemoryEntry:
    """The (a_t, o_t) pair a tool call appends to M_t."""
    output = result.output
    return MemoryEntry(
        step=step,
        tool=spec.name,
        facets=[{"key": f.key, "value": f.value} for f in output.facets],
        confidence=round(float(output.confidence), 4),
        summary=output.summary,
        items=[
            {"item_id": e.item_id, "score": round(float(e.score), 4), "note": e.note} for e in output.items
        ],
        source=result.usage.source,
        stats=dict(fetched.stats),
        evidence=list(fetched.evidence),
    )
