"""CandidateRank's fallback: fuse the episode memory's evidence with the weights named in the context.

Every memory entry e turns into a signal s_e(c) in [0, 1] over the candidates, rank-normalised
(percentile ranks, ties shared) so tools on different scales weigh alike:
- item cards (ItemSemantic, ItemProfile, AuthorPreference, GeoContext, and any item card registered
  through extensions.py): their per-candidate scores;
- user tools (Long/ShortTermPreference, PositivePreference): how well a candidate matches the entry:
  the mean of (a) the MiniLM cosine between the candidate and the mean embedding of the items the
  entry is about (`evidence`, e.g. the liked items) and (b) when the facets state a category
  distribution (`Drama 31%, Comedy 22%`), the candidate's categories' summed share;
  NegativePreference: 1 − that match.
score(c) = Σ_e w_tool(e) · confidence(e) · s_e(c) / Σ_e w_tool(e) · confidence(e); ties keep the
candidates' order. A card's stage and weight field come from the run's library file
(`chainrec_library`) or a registered extension; the weights are the context's fields they name
(`Context.chainrec_weight_*`; a context without a field weighs that tool 0); a learned planner's
checkpoint may carry weights fitted on its training tasks (agents/chainrec/offline/fusion_fit.py), which
`with_fusion_weights` puts into the context its CandidateRank ranks with.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from agents.chainrec.online.catalog import BY_NAME, NEGATIVE, ToolSpec, is_user_tool, known_tools
from agents.chainrec.online.evidence import percentile_ranks
from agents.chainrec.online.library_file import library_of
from state.chainrec.context import ChainRecContext
from state.chainrec.state import MemoryEntry
from world.environment import Environment


def tool_cards(ctx: ChainRecContext) -> dict[str, ToolSpec]:
    """Tool name -> card for every tool a run under `ctx` may record: its library's cards, then the
    registered extensions'."""
    return known_tools(library_of(ctx).catalog)


AVOID = frozenset({BY_NAME[NEGATIVE].node})
"""Nodes of the user tools whose text says what to avoid (their match counts against a candidate,
whatever a library names the card)."""


@dataclass
class Fused:
    """The fusion's result."""

    scores: dict[str, float]
    """Per candidate, in [0, 1]."""
    parts: dict[str, np.ndarray]
    """Per memory entry (by tool), its signal over the candidates."""
    weights: dict[str, float]
    """Per memory entry (by tool), its weight in the fusion (ChainRecContext weight × confidence)."""
    order: list[str]
    """Candidates by score, best first (ties: input order)."""

    def rationale(self, candidates: Sequence[str], item: str) -> str:
        """The two largest weighted contributions to `item`'s score, with their signals, in words."""
        row = list(candidates).index(item)
        ranked = sorted(self.parts, key=lambda tool: -self.weights[tool] * self.parts[tool][row])[:2]
        return "fusion: " + ", ".join(f"{tool} {self.parts[tool][row]:.2f}" for tool in ranked)


def fusion_weights(ctx: ChainRecContext) -> dict[str, float]:
    """Each tool's weight in the fusion: the context field its card names (0 for a field the context
    lacks, e.g. an extension's weight under ChainRec's context)."""
    return {
        name: float(getattr(ctx, spec.weight_field, 0.0))
        for name, spec in tool_cards(ctx).items()
        if spec.weight_field
    }


def with_fusion_weights(ctx: ChainRecContext, weights: Mapping[str, float] | None) -> ChainRecContext:
    """`ctx` with the fusion weights of `weights` (tool -> weight; a tool the context has no field
    for is left out, no weights: `ctx` itself)."""
    if not weights:
        return ctx
    cards = tool_cards(ctx)
    fields = {
        cards[tool].weight_field: float(w)
        for tool, w in weights.items()
        if tool in cards and cards[tool].weight_field
    }
    return replace(ctx, **{name: value for name, value in fields.items() if hasattr(ctx, name)})


SHARE = re.compile(r"([^,;:()]+?) (\d{1,3})%")
"""A category share as the tools write distributions: `Drama 31%`."""


def category_distribution(entry: MemoryEntry) -> dict[str, float]:
    """The category shares an entry's facets state (`Drama 31%, Comedy 22%`), lower-cased names."""
    found: dict[str, float] = {}
    for facet in entry["facets"]:
        for name, percent in SHARE.findall(facet["value"]):
            found.setdefault(name.strip().lower(), int(percent) / 100)
    return found


def user_match(
    env: Environment, entry: MemoryEntry, records: Sequence[Mapping[str, Any]]
) -> np.ndarray | None:
    """How well each candidate matches a user-side entry, in [0, 1]; None when the entry offers
    nothing to match (no evidence items and no category distribution)."""
    parts = []
    evidence = [i for i in entry.get("evidence", []) if i in env.item_index]
    if evidence:
        vectors = env.item_vectors()
        centre = vectors[[env.item_index[i] for i in evidence]].mean(axis=0)
        norm = float(np.linalg.norm(centre))
        if norm > 0:
            candidates = vectors[[env.item_index[r["item_id"]] for r in records]]
            parts.append(np.clip(candidates @ (centre / norm), 0.0, 1.0))
    shares = category_distribution(entry)
    if shares:
        parts.append(
            np.array([min(1.0, sum(shares.get(c.lower(), 0.0) for c in r["categories"])) for r in records])
        )
    return np.mean(parts, axis=0) if parts else None


def entry_signal(
    env: Environment, cards: Mapping[str, ToolSpec], entry: MemoryEntry, records: Sequence[Mapping[str, Any]]
) -> np.ndarray | None:
    """One memory entry's signal s_e over the candidates (see the module docstring); None when a
    user-side entry offers nothing to match."""
    if is_user_tool(entry["tool"], tuple(cards.values())):
        match = user_match(env, entry, records)
        if match is None:
            return None
        signal = percentile_ranks(match)
        avoid = entry["tool"] in cards and cards[entry["tool"]].node in AVOID
        return 1.0 - signal if avoid else signal
    given = {e["item_id"]: float(e["score"]) for e in entry["items"]}
    fill = float(np.mean(list(given.values()))) if given else 0.5
    return percentile_ranks([given.get(r["item_id"], fill) for r in records])


def fuse(
    env: Environment,
    ctx: ChainRecContext,
    records: Sequence[Mapping[str, Any]],
    memory: Sequence[MemoryEntry],
    weights: Mapping[str, float] | None = None,
    signals: dict[str, np.ndarray | None] | None = None,
) -> Fused:
    """Fuse the memory's evidence over the candidates (`get_item` records, in input order) with
    `weights` (tool -> weight; default the context's). `signals`, when given, keeps each tool's
    signal by tool name for the caller's next fusion over the same records and the same entry per
    tool (a trajectory task fuses every subset of its tools' fixed entries)."""
    candidates = [r["item_id"] for r in records]
    weights = fusion_weights(ctx) if weights is None else weights
    cards = tool_cards(ctx)
    parts: dict[str, np.ndarray] = {}
    used: dict[str, float] = {}
    total, norm = np.zeros(len(candidates)), 0.0
    for entry in memory:
        weight = weights.get(entry["tool"], 0.0) * float(entry["confidence"])
        if weight <= 0:
            continue
        if signals is None:
            signal = entry_signal(env, cards, entry, records)
        else:
            if entry["tool"] not in signals:
                signals[entry["tool"]] = entry_signal(env, cards, entry, records)
            signal = signals[entry["tool"]]
        if signal is None:
            continue
        parts[entry["tool"]] = signal
        used[entry["tool"]] = weight
        total += weight * signal
        norm += weight
    scores = total / norm if norm > 0 else total
    order = [candidates[i] for i in np.argsort(-scores, kind="stable")]
    rounded = {c: round(float(s), 6) for c, s in zip(candidates, scores, strict=True)}
    return Fused(rounded, parts, used, order)
