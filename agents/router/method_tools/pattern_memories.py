"""PatternMemories: AMEM4Rec's pattern memories retrieved from its trained cross-user pool for the
user's recent activity, and how each candidate fits them (a method tool of the router's library).

Fetch (no LLM): the same calls as AMEM4Rec's `retrieve_memories` node and its ranker's fallback, with
the run's AMEM4Rec knobs (`amem4rec_pool` or the default pool of the pool-configuration fields,
`amem4rec_top_k`, `amem4rec_recent_items`, `amem4rec_history_weight`, `amem4rec_memory_weight`):
the last `amem4rec_recent_items` visible history items form the query text, the K nearest pool
memories are retrieved (MiniLM cosine), and each candidate scores
(w_h · cos(candidate, recent history) + w_m · cos(candidate, retrieval-weighted memory centre)) /
(w_h + w_m), clipped into [0, 1] (`agents.amem4rec.ranker.fallback_scores`; with neither history nor
memories, training popularity over the candidates' maximum). The ranker's LLM call is not made
inside the tool (the tool's own call reads the same history, patterns and candidates); training,
which writes the pool, never runs here. Confidence = 0.3 + 0.4 × the mean retrieval similarity, 0.1
without memories (then no model is asked).

Visibility: the query is built from the scenario's visible history only; the pool holds abstract
patterns extracted from training windows (no validation or test interaction, no titles).
"""

from __future__ import annotations

import threading

import numpy as np

from agents.amem4rec.ranker import fallback_scores
from agents.amem4rec.retrieval import history_query, ranking_pool, recent_items, retrieve_memories
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.evidence import clip01
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.router.method_tools.support import (
    item_evidence,
    knobs,
    planned_cost,
    top_titles,
    visible_items,
)
from agents.validation import cut_text
from prompts.common import CANDIDATES_HEADER, item_block, item_line, quote
from state.amem4rec.context import Amem4RecContext
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import ToolOutput
from tools.amem4rec.folder import open_pool, pool_exists, pool_location
from tools.amem4rec.index import PoolError
from world.environment import Environment

NAME = "PatternMemories"
SPEC = ToolSpec(
    NAME,
    "pattern_memories",
    "item",
    "AMEM4Rec's shared memory of behaviour patterns: the patterns from many users that resemble this "
    "user's recent activity, and how well each candidate fits them.",
    "the user's recent visible history and AMEM4Rec's trained memory pool (top-K patterns)",
    "facets on the retrieved patterns; one entry per candidate (pattern-and-history fit 0-1)",
    weight_field="chainrec_weight_pattern_memories",
)
"""What the planner sees of the tool."""
PREREQUISITE = "amem4rec"
"""The registry method whose `prepare` hook trains the pool a bench run reads."""
BLOCKING = True
"""The fetch searches the pool's store (and may embed the query): always off the event loop."""
SHOWN_PATTERNS = 3
"""Retrieved patterns described in the answer's facets."""
HISTORY_LINE_CHARS = 85
"""Planned cost: characters of one history line."""
MEMORY_LINE_EXTRA = 100
"""Planned cost: characters of one pattern line besides its two fields (which are planned at half
their cap `amem4rec_memory_chars` each)."""
CANDIDATE_LINE_CHARS = 115
"""Planned cost: characters of one candidate line."""
HEADER_CHARS = 250
"""Planned cost: characters of the headings."""

_ready: set[str] = set()
_ready_lock = threading.Lock()


def unavailable(env: Environment, ctx: ChainRecContext) -> str | None:
    """None when a trained AMEM4Rec pool with memories is found; otherwise what is missing and how to
    make it. Reads `amem4rec_pool` (a bench run's prepare hook sets it to
    `<out>/amem4rec_pool/<method>-<key>`; empty: the dataset's default pool for the pool-configuration
    fields). A pool found ready is remembered for the process (no store access on later calls)."""
    amem = knobs(ctx, Amem4RecContext)
    location = pool_location(amem, env.dataset)
    with _ready_lock:
        if location in _ready:
            return None
    train = f"`recgraph amem4rec train --dataset {ctx.dataset}` (the router's bench prepare hook trains one)"
    if not pool_exists(location):
        return f"no trained AMEM4Rec pool for {env.dataset.name} at {location}: run {train}"
    try:
        size = open_pool(location, env.dataset).size()
    except PoolError as error:
        return f"AMEM4Rec pool unusable: {error}"
    if size == 0:
        return f"the AMEM4Rec pool at {location} holds no memories yet: run {train}"
    with _ready_lock:
        _ready.add(location)
    return None


def cost(ctx: ChainRecContext) -> ToolCost:
    """Planned cost of one call: the recent history, K patterns (two fields of at most
    `amem4rec_memory_chars` characters each) and one line per candidate. Character sizes are
    typical ml-100k lines (20 users: median prompt within 10% of it)."""
    amem = knobs(ctx, Amem4RecContext)
    recent = amem.amem4rec_recent_items or 50
    patterns = amem.amem4rec_top_k * (amem.amem4rec_memory_chars + MEMORY_LINE_EXTRA)
    return planned_cost(SPEC, recent * HISTORY_LINE_CHARS + patterns + HEADER_CHARS, CANDIDATE_LINE_CHARS)


def _pattern_line(number: int, memory: dict) -> str:
    facts = f"similarity {memory['score']:.2f}, refined {memory.get('evolution_count', 0)}x"
    behaviour, pattern = quote(memory["behavior_explanation"]), quote(memory["pattern_description"])
    return f"M{number}. ({facts}) behaviour: {behaviour} | pattern: {pattern}"


def pattern_memories(episode: Episode) -> Fetched:
    """PatternMemories: retrieve AMEM4Rec's pattern memories and score the candidates (see the module
    docstring)."""
    env, amem = episode.env, knobs(episode.ctx, Amem4RecContext)
    candidates = list(episode.candidates)
    recent = recent_items(visible_items(episode), amem.amem4rec_recent_items)
    pool, where = ranking_pool(amem, env)
    memories = retrieve_memories(pool, history_query(env, recent), amem.amem4rec_top_k)
    vectors = pool.vectors([m["id"] for m in memories]) if pool is not None and memories else np.zeros((0, 0))
    similarity = [float(m["score"]) for m in memories]
    raw = fallback_scores(env, recent, vectors, similarity, candidates, amem)
    # Without history and memories the ranker's fallback is training popularity: scaled by its maximum.
    scores = np.clip(raw, 0.0, 1.0) if recent or memories else raw / max(float(raw.max()), 1.0)
    rows = env.item_vectors()[[env.item_index[c] for c in candidates]].astype(np.float64)
    fit = rows @ np.asarray(vectors, dtype=np.float64).T if memories else np.zeros((len(candidates), 0))
    items = []
    for i, item in enumerate(candidates):
        note = f"closest M{int(fit[i].argmax()) + 1} {fit[i].max():.2f}; " if memories else ""
        items.append(item_evidence(item, float(scores[i]), f"{note}score {scores[i]:.2f}"))
    best = top_titles(env, candidates, scores)
    size = pool.size() if pool is not None else 0
    facets = []
    if memories:
        span = f"similarity {max(similarity):.2f} to {min(similarity):.2f}"
        facets.append(facet("retrieved_patterns", f"{len(memories)} of {size} pool memories, {span}"))
        facets += [
            facet(f"pattern_{n}", m["behavior_explanation"])
            for n, m in enumerate(memories[:SHOWN_PATTERNS], 1)
        ]
    else:
        facets.append(facet("retrieved_patterns", "none: " + where if pool is None else "none for this user"))
    facets.append(facet("query", f"{len(recent)} most recent visible items"))
    facets.append(facet("best_fitting", best))
    lead = memories[0]["behavior_explanation"] if memories else "no shared pattern found"
    summary = f"Closest shared pattern: {cut_text(lead, 150, collapse=True)} Best fitting candidates: {best}."
    confidence = round(0.3 + 0.4 * clip01(float(np.mean(similarity))), 4) if memories else 0.1
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    lines = [
        f"The user's {len(recent)} most recent visible interactions, most recent first:",
        item_block(env.dataset, list(reversed(recent))),
        f"Patterns from many users that resemble this activity (a pool of {size}), closest first:",
        "\n".join(_pattern_line(n, m) for n, m in enumerate(memories, 1)) or "(none)",
        "",
        CANDIDATES_HEADER,
    ]
    for i, item in enumerate(candidates):
        closest = f", closest M{int(fit[i].argmax()) + 1} ({fit[i].max():.2f})" if memories else ""
        lines.append(f"{item_line(env.dataset, item)} | AMEM4Rec fit {scores[i]:.2f}{closest}")
    stats = {
        "retrieved_memories": float(len(memories)),
        "pool_size": float(size),
        "query_items": float(len(recent)),
    }
    notes = () if pool is not None else (where,)
    return Fetched("\n".join(lines), output, stats, tuple(candidates), needed=bool(memories), notes=notes)
