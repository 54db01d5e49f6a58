"""MemRec Stage R, step 2: LM_Mem ("mem" role) synthesises preference facets from the curated neighbours.

Tiered context within the token budget tau (≈4 characters a token, counted over the user memory,
the neighbour notes and the candidate list; the fixed instructions are not counted): every
neighbour starts with its full note (users: their last three training titles; items: memory cut
to `ITEM_NOTE_CHARS`); while over budget the lowest-scored neighbour still at full length is
shortened (one title / `SHORT_NOTE_CHARS`), then the lowest-scored neighbours are dropped, and
last the user memory is cut. Fallback: facets are the categories with the highest weighted
support over the curated neighbours (confidence = that support); on a catalog without categories,
the titles of the best-supported items (`title_facets`), matched by text similarity in ReRank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import AgentTask, InvalidAnswer
from agents.memrec.curation import Curated
from agents.memrec.feature_index import FeatureIndex
from agents.memrec.features import recency_profile
from agents.memrec.text_facets import support_edges, title_facets
from agents.ranking import clip_score
from agents.usage import estimate_tokens
from agents.validation import (
    CONFIDENCE_CLIPPED,
    DUPLICATE_FACET,
    DUPLICATE_NEIGHBOUR,
    EMPTY_FACET,
    EXTRA_FACET,
    INVALID_EDGE,
    NO_FACETS,
    UNKNOWN_NEIGHBOUR,
    WEIGHT_CLIPPED,
    constrained_schema,
    cut_text,
    keep_known_unique,
)
from prompts import memrec as prompts
from prompts.common import quote, quote_list
from prompts.evidence import candidates_evidence
from state.context import Context
from state.memrec.schemas import Facet, FacetSet, SupportEdge
from tools.memrec.graph import user_node
from world.environment import Environment

ITEM_NOTE_CHARS = 200
"""Full item note: its memory cut to this many characters."""
SHORT_NOTE_CHARS = 60
"""Shortened notes (over budget) keep this many characters."""
SYNTHESIS_NEEDS = {"category_facets": "categories"}
"""The fallback's category facets need item categories; without them facets are titles."""
SUPPORTERS_PER_FACET = 5
"""Fallback facets list at most this many supporting neighbours."""


def facet_json_schema(n_facets: int, neighbour_ids: Sequence[str], user_node_id: str) -> dict[str, Any]:
    """`FacetSet` as a JSON schema: exactly `n_facets` facets, neighbour ids as an enum of the curated set."""
    ids = list(neighbour_ids)
    endpoint = {"enum": [*ids, user_node_id]}
    unit = {"minimum": 0, "maximum": 1}
    return constrained_schema(
        FacetSet,
        {
            "facets": {"minItems": n_facets, "maxItems": n_facets},
            "facets[].facet": {"maxLength": 120},
            "facets[].confidence": unit,
            "facets[].supporting_neighbors": {"maxItems": 8 if ids else 0},
            "facets[].supporting_neighbors[]": {"enum": ids} if ids else {},
            "support_edges": {"maxItems": len(ids)},
            "support_edges[].from": endpoint,
            "support_edges[].to": endpoint,
            "support_edges[].w": unit,
        },
    )


def neighbour_notes(env: Environment, curated: Curated, memories: dict[str, str]) -> list[tuple[str, str]]:
    """(full, short) note of each curated neighbour, in curated order."""
    notes = []
    for node, is_item in zip(curated.node_ids, curated.is_item, strict=True):
        if is_item:
            text = memories.get(node, env.dataset.items[node[2:]].title)
            notes.append(
                (
                    f"{node} (item): {quote(text, ITEM_NOTE_CHARS)}",
                    f"{node} (item): {quote(text, SHORT_NOTE_CHARS)}",
                )
            )
        else:
            case = env.cases.get(node[2:])
            titles = [env.dataset.items[e.item_id].title for e in reversed(case.history[-3:])] if case else []
            recent = quote_list(titles, max_chars=ITEM_NOTE_CHARS) or "no training interactions"
            short = quote(titles[0], SHORT_NOTE_CHARS) if titles else recent
            notes.append((f"{node} (user): recently {recent}", f"{node} (user): recently {short}"))
    return notes


@dataclass(frozen=True)
class BudgetedContext:
    """The Stage R context actually shown."""

    user_memory: str
    """The user memory (cut only as the last resort)."""
    lines: list[str]
    """Neighbour notes kept, best first."""
    shown: list[str]
    """Node ids of the neighbours kept."""
    tokens: int
    """Estimated tokens of memory + notes + candidates."""
    shortened: int
    """Notes shortened to fit."""
    dropped: int
    """Neighbours dropped to fit."""


def fit_budget(
    user_memory: str,
    node_ids: Sequence[str],
    notes: Sequence[tuple[str, str]],
    candidates_text: str,
    budget: int,
) -> BudgetedContext:
    """Apply the tiered budget (see the module docstring); node_ids/notes are best first."""
    use_short = [False] * len(notes)
    keep = len(notes)

    def tokens(memory: str) -> int:
        lines = [notes[i][1 if use_short[i] else 0] for i in range(keep)]
        return estimate_tokens("\n".join([memory, *lines, candidates_text]))

    shortened = 0
    for i in reversed(range(len(notes))):
        if tokens(user_memory) <= budget:
            break
        use_short[i], shortened = True, shortened + 1
    while keep and tokens(user_memory) > budget:
        keep -= 1
    memory = user_memory
    while memory and tokens(memory) > budget:
        memory = cut_text(memory, max(0, len(memory) - 40), collapse=True) if len(memory) > 41 else ""
    lines = [notes[i][1 if use_short[i] else 0] for i in range(keep)]
    return BudgetedContext(
        memory, lines, list(node_ids[:keep]), tokens(memory), sum(use_short[:keep]), len(notes) - keep
    )


def category_facets(
    index: FeatureIndex, curated: Curated, user_id: str, n_facets: int, visible: Sequence[str] | None = None
) -> FacetSet:
    """Fallback facets: categories ranked by weighted support over the curated neighbours.

    Membership of a category: items 1/0; users their share of it relative to their top category.
    Weights: curation scores (clipped at 0). Without neighbours (w/o Collab. Read) the user's own
    training items stand in, weighted by edge weight, and facets list no supporters. A catalog
    without categories gets `title_facets` instead.
    """
    if not index.categories:
        return title_facets(index, curated, user_id, n_facets, visible)
    if curated.node_ids:
        items, users = curated.index[curated.is_item], curated.index[~curated.is_item]
        member = np.zeros((len(curated.node_ids), len(index.categories)))
        member[curated.is_item] = index.item_categories[items]
        dist = index.user_dist[users]
        top = dist.max(axis=1, keepdims=True)
        member[~curated.is_item] = np.divide(dist, top, out=np.zeros_like(dist), where=top > 0)
        weights = np.clip(curated.scores, 0.0, None)
    else:
        own, weights = recency_profile(index, user_id, visible)
        member = index.item_categories[own]
    if not len(weights) or not member.size:
        return FacetSet(facets=[], support_edges=[])
    weights = weights if weights.sum() > 0 else np.ones(len(weights))
    support = weights @ member / weights.sum()
    order = [j for j in np.argsort(-support, kind="stable")[:n_facets] if support[j] > 0]
    facets = []
    for j in order:
        rows = np.flatnonzero(member[:, j] >= 0.5) if curated.node_ids else []
        backers = [curated.node_ids[i] for i in rows][:SUPPORTERS_PER_FACET]
        source = f"{len(backers)} curated neighbours" if curated.node_ids else "the user's own history"
        text = f"{index.categories[j]} (weighted support {support[j]:.2f} from {source})"
        facets.append(Facet(facet=text, confidence=round(float(support[j]), 4), supporting_neighbors=backers))
    return FacetSet(facets=facets, support_edges=support_edges(curated, user_id))


def validate_facets(
    answer: FacetSet, shown: Sequence[str], user_id: str, n_facets: int
) -> tuple[FacetSet, list[str]]:
    """Clip confidences and weights, drop unknown supporters and edges, keep at most `n_facets`."""
    allowed, repairs, facets, seen = set(shown), [], [], set()
    for facet in answer.facets:
        text = " ".join(facet.facet.split())
        if not text or text.lower() in seen:
            repairs.append(DUPLICATE_FACET if text else EMPTY_FACET)
            continue
        if len(facets) == n_facets:
            repairs.append(EXTRA_FACET)
            continue
        seen.add(text.lower())
        confidence, clipped = clip_score(facet.confidence, 0.0, 1.0)
        repairs += [CONFIDENCE_CLIPPED] if clipped else []
        backers, dropped = keep_known_unique(
            facet.supporting_neighbors,
            allowed,
            key=str,
            keep=lambda node, _: node,
            unknown=UNKNOWN_NEIGHBOUR,
            duplicate=DUPLICATE_NEIGHBOUR,
        )
        repairs += dropped
        facets.append(Facet(facet=text, confidence=confidence, supporting_neighbors=list(backers)))
    if not facets:
        raise InvalidAnswer("no usable facet; give non-empty, distinct facet phrases", kind=NO_FACETS)
    endpoints, edges = allowed | {user_node(user_id)}, []
    for edge in answer.support_edges:
        if edge.from_ not in endpoints or edge.to not in endpoints or edge.from_ == edge.to:
            repairs.append(INVALID_EDGE)
            continue
        weight, clipped = clip_score(edge.w, 0.0, 1.0)
        repairs += [WEIGHT_CLIPPED] if clipped else []
        edges.append(SupportEdge(from_=edge.from_, to=edge.to, w=weight))
    return FacetSet(facets=facets, support_edges=edges), repairs


def synthesis_task(
    env: Environment,
    index: FeatureIndex,
    curated: Curated,
    user_id: str,
    user_memory: str,
    candidates: Sequence[str],
    memories: dict[str, str],
    n_facets: int,
    budget: int,
    visible: Sequence[str] | None = None,
    ctx: Context | None = None,
) -> tuple[AgentTask[FacetSet], BudgetedContext]:
    """The Stage R agent task for one user, and the budgeted context it shows; the candidates are
    the evidence contract's (`prompts.evidence`: their text under `ctx`; the request line is the
    reranker's, so not repeated here)."""
    candidates_text = candidates_evidence(env, candidates, ctx, use_instruction=False)
    notes = neighbour_notes(env, curated, memories)
    context = fit_budget(user_memory, curated.node_ids, notes, candidates_text, budget)
    messages = prompts.SYNTHESIS.format_messages(
        user=user_node(user_id),
        user_memory=quote(context.user_memory) if context.user_memory else "(empty)",
        neighbours="\n".join(f"- {line}" for line in context.lines) or "(none: no neighbours are read)",
        n_facets=n_facets,
        candidates=candidates_text,
    )

    def validate(answer: FacetSet) -> tuple[FacetSet, list[str]]:
        return validate_facets(answer, context.shown, user_id, n_facets)

    def fallback() -> FacetSet:
        return category_facets(index, curated, user_id, n_facets, visible)

    schema = facet_json_schema(n_facets, context.shown, user_node(user_id))
    return AgentTask(
        agent="synthesise",
        role="mem",
        messages=messages,
        schema=FacetSet,
        validate=validate,
        fallback=fallback,
        json_schema=schema,
    ), context
