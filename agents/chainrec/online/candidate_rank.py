"""CandidateRank, the terminal action: every candidate ordered from the collected evidence, with a
short rationale each.

It fetches the candidates' records through `get_item` (so a prompt names only what a tool fetched)
and shows the user-side memory plus, per candidate, what the item tools noted. The answer is repaired
into a permutation of exactly the candidates (unknown and repeated ids dropped, missing ones appended
in the fusion's order); the fallback is the fusion of agents/chainrec/online/fusion.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from agents.base import AgentTask
from agents.chainrec.online.catalog import is_user_tool
from agents.chainrec.online.fusion import Fused, fuse, tool_cards
from agents.chainrec.online.item_tools import fetch_items
from agents.chainrec.online.tool_agent import Episode
from agents.ranking import repair_ranking
from agents.validation import constrained_schema
from prompts import chainrec as prompts
from prompts.evidence import candidates_evidence
from state.chainrec.context import ChainRecContext
from state.chainrec.schemas import NOTE_CHARS, RankAnswer, RankedItem

ANSWER_TOKENS = (60, 30)
"""Output tokens CandidateRank's answer needs: a base plus this many per candidate."""
FILLED = "(placed by the evidence fusion)"


@dataclass
class RankCall:
    """CandidateRank's agent task and the fusion it falls back on (computed only when needed)."""

    task: AgentTask[RankAnswer]
    """The agent task (role "rec")."""
    fused: Any
    """() -> Fused, cached: the fallback's scores and order."""
    context: ChainRecContext | None
    """A context with room for one entry per candidate in the answer (None: the run's is enough)."""


def _candidate_lines(episode: Episode, candidates: Sequence[str], memory: Sequence[dict[str, Any]]) -> str:
    notes: dict[str, list[str]] = {c: [] for c in candidates}
    for entry in memory:
        for item in entry["items"]:
            if item["item_id"] in notes:
                note = prompts.quote(item["note"], 80)
                notes[item["item_id"]].append(f"{entry['tool']}: {note} ({float(item['score']):.2f})")
    joined = {item: "; ".join(parts) for item, parts in notes.items() if parts}
    return candidates_evidence(
        episode.env, candidates, episode.ctx, user_id=episode.scope.user_id, notes=joined
    )  # the evidence contract: the same T(i) and request line as every LLM ranker


def rank_call(episode: Episode) -> RankCall:
    """Build CandidateRank for the episode."""
    candidates = list(episode.candidates)
    records = fetch_items(episode, candidates)
    memory = episode.memory
    cards = tuple(tool_cards(episode.ctx).values())
    user_side = [e for e in memory if is_user_tool(e["tool"], cards)]
    shown = _candidate_lines(episode, candidates, memory)
    messages = prompts.rank_messages(prompts.memory_digest(user_side), shown)
    fused = cache(lambda: fuse(episode.env, episode.ctx, records, memory))

    def fallback() -> RankAnswer:
        result: Fused = fused()
        return RankAnswer(
            ranked=[RankedItem(item_id=c, reason=result.rationale(candidates, c)) for c in result.order]
        )

    def validate(answer: RankAnswer) -> tuple[RankAnswer, list[str]]:
        proposed = [str(r.item_id).strip() for r in answer.ranked]
        ranking, repairs = repair_ranking(proposed, candidates)
        reasons: dict[str, str] = {}
        for entry in answer.ranked:
            reasons.setdefault(str(entry.item_id).strip(), " ".join(entry.reason.split())[:NOTE_CHARS])
        ranked = [RankedItem(item_id=c, reason=reasons.get(c, FILLED)) for c in ranking]
        return RankAnswer(ranked=ranked), repairs

    base, per_item = ANSWER_TOKENS
    needed = base + per_item * len(candidates)
    ctx = replace(episode.ctx, max_output_tokens=needed) if needed > episode.ctx.max_output_tokens else None
    task = AgentTask(
        agent="candidate_rank",
        role="rec",
        messages=messages,
        schema=RankAnswer,
        validate=validate,
        fallback=fallback,
        json_schema=constrained_schema(
            RankAnswer,
            {
                "ranked": {"minItems": len(candidates), "maxItems": len(candidates)},
                "ranked[].item_id": {"enum": candidates},
                "ranked[].reason": {"maxLength": NOTE_CHARS},
            },
        ),
        ranked_ids=lambda answer: [entry.item_id for entry in answer.ranked],
    )
    return RankCall(task, fused, ctx)
