"""MemoryNeighbourhood: MemRec's curated collaborative neighbourhood and synthesised facets, read from
MemRec's memory graph, with MemRec's per-candidate scores (a method tool of the router's library).

Fetch (no LLM, nothing written: no Stage W inside the tool): `agents.memrec.neighbourhood_view`
runs MemRec's Stage R on its heuristic path for the episode's user and candidates, with the run's
MemRec knobs (`memrec_memory`, `memrec_rules`, `memrec_k`, `memrec_min_users`, `memrec_min_items`,
`memrec_facets`, `memrec_token_budget`, `memrec_use_read`):
- curate: the rule set scores the user's 1- and 2-hop neighbourhood in the training graph, the
  user's own items limited to the scenario's visible history (as in MemRec's graph), top k kept;
- synthesise runs as its fallback (categories by weighted support over the curated neighbours):
  MemRec's LM_Mem is not asked inside the tool, because the tool's own call is that synthesis;
- rerank runs as MemRec's heuristic blend fallback (0.25 facet match + 0.25 embedding + 0.5 collaborative
  signal, renormalised over the parts with signal): each candidate's score in [0, 1].
The LLM sees the budgeted Stage R context (user memory, curated neighbour notes within
`memrec_token_budget`, as MemRec's synthesis shows them), the facets and the candidates with their
three blend parts, and answers facets and per-candidate scores. Confidence = 0.6 × how full the
curated set is (kept / `memrec_k`), 0.1 without neighbours (then no model is asked).

Visibility: MemRec's graph holds training interactions only (nobody's validation or test
interaction), so no held-out target is read; other users' notes are their latest training titles,
not cut at the episode's time (MemRec's own rule, unlike `get_user`'s). The user's memory
summarises their whole training history; when the scenario hides part of it (cold_user,
evolving_*) its text is withheld from the prompt (the blend parts and curation still use its
embedding, as MemRec's own graph does).
"""

from __future__ import annotations

from pathlib import Path

from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.memrec.neighbourhood_view import NeighbourhoodView, neighbourhood_view
from agents.memrec.synthesis import fit_budget, neighbour_notes
from agents.router.method_tools.support import (
    hides_history,
    item_evidence,
    knobs,
    planned_cost,
    top_titles,
    visible_items,
)
from prompts.common import CANDIDATES_HEADER, item_line, quote
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import MAX_FACETS, ToolOutput
from state.memrec.context import MemRecContext
from world.database import database_url
from world.environment import Environment

NAME = "MemoryNeighbourhood"
SPEC = ToolSpec(
    NAME,
    "memory_neighbourhood",
    "item",
    "MemRec's collaborative memory: the user's curated neighbourhood of similar users and items, the "
    "preference facets it supports, and how strongly it backs each candidate.",
    "MemRec's memory graph: the user's memory, the curated 1- and 2-hop neighbours and their memories",
    "facets from the curated neighbourhood; one entry per candidate (MemRec's collaborative score 0-1)",
    weight_field="chainrec_weight_memory_neighbourhood",
)
"""What the planner sees of the tool."""
PREREQUISITE = "memrec"
"""The registry method whose `prepare` hook builds the memory graph a bench run reads."""
BLOCKING = True
"""The fetch reads the memory graph's store (and may embed): always off the event loop."""
SHOWN_FACETS = MAX_FACETS - 3
"""MemRec facets copied into the answer (the rest of the facet slots describe the neighbourhood)."""
WITHHELD = "(withheld: it summarises history this scenario hides)"
"""What the prompt shows instead of the user's memory when the scenario hides part of the history."""
CANDIDATE_LINE_CHARS = 140
"""Planned cost: characters of one candidate line (item line and the three blend parts)."""
NEIGHBOUR_NOTE_CHARS = 100
"""Planned cost: characters of one curated neighbour's note (a user's three titles, an item's memory)."""
USER_MEMORY_CHARS = 250
"""Planned cost: characters of the user's memory."""
FACET_LINE_CHARS = 70
"""Planned cost: characters of one facet line."""
HEADER_CHARS = 260
"""Planned cost: characters of the headings."""


def unavailable(env: Environment, ctx: ChainRecContext) -> str | None:
    """None when MemRec's memory graph can be read; otherwise what is missing and how to make it.
    Reads `memrec_use_read` and `memrec_memory` (empty: the dataset's default graph, seeded from the
    training interactions on first use; a MemRec or router bench run's prepare hook points it at
    `<out>/memrec_memory/<method>.sqlite`)."""
    memrec = knobs(ctx, MemRecContext)
    if not memrec.memrec_use_read:
        return "MemRec's collaborative read is off (memrec_use_read=False): no neighbourhood to read"
    path = Path(memrec.memrec_memory).expanduser() if memrec.memrec_memory else None
    if path is not None and database_url() is None and not path.is_file():
        return (
            f"no MemRec memory graph at {path} for {env.dataset.name}: run MemRec's prepare hook "
            f"(`recgraph bench` runs it for the router) or `recgraph memrec init --memory {path}`, or "
            "leave memrec_memory empty for the dataset's default graph"
        )
    return None


def cost(ctx: ChainRecContext) -> ToolCost:
    """Planned cost of one call: the user memory and `memrec_k` neighbour notes (at most
    `memrec_token_budget` tokens, MemRec's τ), the facet lines and headings, and one line per
    candidate. Character sizes are typical ml-100k lines (20 users: median prompt within 10% of it)."""
    memrec = knobs(ctx, MemRecContext)
    context = min(4 * memrec.memrec_token_budget, memrec.memrec_k * NEIGHBOUR_NOTE_CHARS + USER_MEMORY_CHARS)
    data = context + memrec.memrec_facets * FACET_LINE_CHARS + HEADER_CHARS
    return planned_cost(SPEC, data, CANDIDATE_LINE_CHARS)


def _candidate_lines(env: Environment, candidates: list[str], view: NeighbourhoodView) -> str:
    lines = [CANDIDATES_HEADER]
    for i, item in enumerate(candidates):
        parts = ", ".join(f"{name} {values[i]:.2f}" for name, values in view.parts.items())
        lines.append(f"{item_line(env.dataset, item)} | MemRec score {view.scores[i]:.2f}: {parts}")
    return "\n".join(lines)


def memory_neighbourhood(episode: Episode) -> Fetched:
    """MemoryNeighbourhood: MemRec's curated neighbourhood, facets and Vector scores (see the module
    docstring)."""
    env, memrec, user = episode.env, knobs(episode.ctx, MemRecContext), episode.scope.user_id
    candidates, visible = list(episode.candidates), visible_items(episode)
    view = neighbourhood_view(env, memrec, user, candidates, visible)
    curated = view.curated
    kept, n_items = len(curated.node_ids), int(curated.is_item.sum())
    hidden = hides_history(env, user, visible)
    user_memory = "" if hidden else view.user_memory
    candidates_text = _candidate_lines(env, candidates, view)
    notes = neighbour_notes(env, curated, view.memories)
    shown = fit_budget(user_memory, curated.node_ids, notes, candidates_text, memrec.memrec_token_budget)
    facet_lines = [f"- {quote(f.facet)} [{f.confidence:.2f}]" for f in view.facets.facets]
    neighbourhood = f"{kept} of {curated.pool} neighbours ({n_items} items, {kept - n_items} users)"
    memory = quote(shown.user_memory) if shown.user_memory else WITHHELD if hidden else "(empty)"
    budget = f"{shown.shortened} shortened, {shown.dropped} left out for the budget"
    text = "\n".join(
        [
            f"MemRec memory graph, curation rules {quote(view.rule_set, 60)}: {neighbourhood} kept.",
            f"The user's memory: {memory}",
            f"Curated neighbours, best first ({budget}):",
            "\n".join(f"- {line}" for line in shown.lines) or "(none)",
            "Preference facets the neighbourhood supports (weighted support):",
            "\n".join(facet_lines) or "(none)",
            "",
            candidates_text,
        ]
    )
    items = [
        item_evidence(c, float(view.scores[i]), ", ".join(f"{n} {v[i]:.2f}" for n, v in view.parts.items()))
        for i, c in enumerate(candidates)
    ]
    facets = [facet("neighbourhood", f"{neighbourhood}, rules {view.rule_set}")]
    facets += [facet(f"facet_{n}", f.facet) for n, f in enumerate(view.facets.facets[:SHOWN_FACETS], 1)]
    collaborative = view.parts["collaborative"]
    if collaborative.any():
        facets.append(facet("neighbours_chose", top_titles(env, candidates, collaborative)))
    best = top_titles(env, candidates, view.scores)
    facets.append(facet("best_supported", best))
    themes = ", ".join(f.facet.split(" (")[0] for f in view.facets.facets[:3]) or "no clear theme"
    summary = f"MemRec's neighbourhood of {kept} favours {themes}; best supported: {best}."
    confidence = round(0.6 * min(1.0, kept / max(memrec.memrec_k, 1)), 4) if kept else 0.1
    output = ToolOutput(facets=facets, confidence=confidence, summary=summary, items=items)
    stats = {
        "curated_neighbours": float(kept),
        "curated_items": float(n_items),
        "neighbour_pool": float(curated.pool),
        "facets": float(len(view.facets.facets)),
    }
    flags = ["user memory withheld: it summarises history this scenario hides"] if hidden else []
    flags += [] if episode.domain["categories"] else ["no categories: facets are titles"]
    flags += [] if memrec.memrec_use_read else ["collaborative read off: no neighbours"]
    return Fetched(text, output, stats, tuple(candidates), needed=kept > 0, notes=tuple(flags))
