"""AgentMemories (a router method tool): AgentCF's trained user and item agent memories, and how well
each candidate's item memory matches the user agent's self-description.

What it adds: AgentCF's memories are written by collaborative reflection over every trained user's
choices, so an item's memory says which users chose it and why ("liked by users who like ..."),
and the user's memory says what they chose against what. No other tool carries that text.

Fetch (no LLM, nothing written): the user agent's current self-description and each candidate's
item-agent description from the `agentcf_memory` file AgentCF's `prepare` trained (the router's
`prepare` runs it: `PREREQUISITE`); each candidate's score is AgentCF's ranking fallback (its
memory's match with the user's likes plus log-scaled training popularity, agents/agentcf/rank.py),
rank-normalised over the candidates. The one LLM call reads the quoted memories and answers
per-candidate scores. Training replays the users' training interactions only, so no memory names
a held-out target. The user's memory summarises their whole training history: when the scenario
hides part of it (or training never reached the user) the tool shows a self-description written
from the visible history's terms instead (`own_memory`), and says so in its notes.
"""

from __future__ import annotations

from pathlib import Path

from agents.agentcf.memory import history_memory
from agents.agentcf.rank import fallback_scores
from agents.agentcf.recall import item_memories, user_memory
from agents.chainrec.online.catalog import ToolCost, ToolSpec
from agents.chainrec.online.evidence import percentile_ranks, title_list
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode, Fetched, facet
from agents.router.method_tools.support import (
    hides_history,
    knobs,
    planned_cost,
    ranked_evidence,
    visible_items,
)
from prompts.common import item_line, quote
from state.agentcf.context import AgentCFContext
from state.chainrec.schemas import ToolOutput
from tools.agentcf.store import Memories, read_only
from world.environment import Environment

NAME = "AgentMemories"
SPEC = ToolSpec(
    NAME,
    "agent_memories",
    "item",
    "AgentCF's agent memories: the user agent's self-description and each candidate's item-agent "
    "description, written by collaborative reflection on which users chose the item and why.",
    "AgentCF's trained memories file: the user's self-description, every candidate's description",
    "one entry per candidate (memory match 0-1, rank-normalised); the quoted memories",
    weight_field="chainrec_weight_agent_memories",
)
"""What the planner sees of AgentMemories."""
PREREQUISITE = "agentcf"
"""The registry method whose `prepare` hook trains the memories a bench run reads."""
BLOCKING = True
"""The first fetch of a process reads the memories file: off the event loop."""
CONFIDENCE = 0.6
"""The answer's confidence: a trained user memory (an untrained user is masked)."""
HEADER_CHARS = 160
"""Planned cost: characters of the headings."""


def unavailable(env: Environment, ctx: object) -> str | None:
    """None when AgentCF's trained memories file can be read; otherwise what is missing and how to
    make it (`agentcf_memory`: set by AgentCF's prepare, which the router's prepare runs)."""
    path = knobs(ctx, AgentCFContext).agentcf_memory  # type: ignore[arg-type]
    if not path:
        return (
            f"no AgentCF memories for {env.dataset.name}: AgentCF's prepare step trains them "
            "(`recgraph bench --methods agentcf`, or the router's own prepare), or set agentcf_memory"
        )
    if not Path(path).expanduser().is_file():
        return f"no AgentCF memories file at {path}: AgentCF's prepare step writes it"
    return None


def own_memory(
    env: Environment, agentcf: AgentCFContext, stored: Memories, user: str, visible: list[str]
) -> tuple[str, str]:
    """(the user agent's self-description the tool may show, where it came from): the trained memory
    when training wrote one and the scenario hides none of the user's training history; else one
    written from the visible history's terms (most recent first), as AgentCF's sequential ranking
    describes recent history."""
    hidden = hides_history(env, user, visible)
    if user in stored.users and not hidden:
        return user_memory(stored, user), "trained"
    why = "this scenario hides part of the history it summarises" if hidden else "no trained memory"
    return history_memory(env.dataset.items, visible, agentcf.agentcf_user_chars), why


def cost(ctx: object) -> ToolCost:
    """Planned cost of one call: the user memory (`agentcf_user_chars` at most) and the headings,
    one quoted item memory and item line per candidate (`agentcf_item_chars` at most)."""
    agentcf = knobs(ctx, AgentCFContext)  # type: ignore[arg-type]
    return planned_cost(SPEC, agentcf.agentcf_user_chars + HEADER_CHARS, agentcf.agentcf_item_chars + 100)


def agent_memories(episode: Episode) -> Fetched:
    """AgentMemories: AgentCF's memories of the user and the candidates and their match (see the
    module docstring)."""
    env, user = episode.env, episode.scope.user_id
    agentcf = knobs(episode.ctx, AgentCFContext)  # type: ignore[arg-type]
    candidates = list(episode.candidates)
    records = fetch_items(episode, candidates)
    stored = read_only(agentcf.agentcf_memory)
    visible = visible_items(episode)
    memory, source = own_memory(env, agentcf, stored, user, visible)
    memories = item_memories(env, stored, candidates)
    raw = fallback_scores(env, agentcf, memory, memories, candidates, visible, [])
    scores = percentile_ranks([raw[c] for c in candidates])
    items, best, _ = ranked_evidence(records, scores, "AgentCF memory match", "match")
    lines = [
        f"- {item_line(env.dataset, c)} | item memory: {quote(memories[c], agentcf.agentcf_item_chars)} "
        f"| match score {s:.2f}"
        for c, s in zip(candidates, scores, strict=True)
    ]
    trained = sum(1 for c in candidates if c in stored.items)
    text = "\n".join(
        [
            f"AgentCF user agent's self-description ({source}): {quote(memory, agentcf.agentcf_user_chars)}",
            f"Candidates with their item agents' descriptions ({trained} of {len(candidates)} trained):",
            *lines,
        ]
    )
    facets = [
        facet("user_memory", f"({source}) {memory}"),
        facet("trained_item_memories", f"{trained} of {len(candidates)} candidates"),
        facet("best_matched", title_list(best, 3)),
    ]
    summary = f"AgentCF's memories match best: {title_list(best, 3)}."
    output = ToolOutput(facets=facets, confidence=CONFIDENCE, summary=summary, items=items)
    stats = {"trained_item_memories": float(trained)}
    notes = () if source == "trained" else (f"user memory from the visible history: {source}",)
    return Fetched(text, output, stats, tuple(candidates), needed=True, notes=notes)
