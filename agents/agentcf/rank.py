"""The user agent ranks the candidates from its memory and the candidates' item memories (the paper's
ranking step), in one of three prompt variants (`agentcf_ranking`): basic; sequential (the recent
history too); retrieval (past self-descriptions retrieved for the candidates too).

Fallback score per candidate c: `affinity(user memory, c)` on likes only (`DISLIKE_WEIGHT`), plus its
log-scaled training popularity (`POPULARITY_WEIGHT`); sequential adds half the affinity of a memory
made of the recent history's terms, retrieval half that of the retrieved past self-descriptions.
Ties: training popularity, then the order given.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agents.agentcf.memory import affinity, history_memory
from agents.base import AgentTask
from agents.ranking import ranking_json_schema, repair_ranking
from prompts.agentcf import RANK_BASIC, RANK_RETRIEVAL, RANK_SEQUENTIAL
from prompts.common import item_block, quote
from prompts.evidence import instruction_for, item_text_block, request_line
from state.agentcf.context import AgentCFContext
from state.schemas import RankedList
from world.environment import Environment

SIDE_WEIGHT = 0.5
"""Weight of the recent history's (sequential) or the past memories' (retrieval) affinity."""
POPULARITY_WEIGHT = 1.0
"""Weight of log-scaled training popularity (0..1) added to the affinity: the general knowledge the
prompts tell the agent to fall back on when its memory does not decide."""
DISLIKE_WEIGHT = 0.0
"""The fallback ranks by likes only: the heuristic dislikes come from popularity-sampled negatives, and
on ml-100k (100 users, heuristic) weighing them at 0.5 lowered ndcg@5 from 0.576 to 0.512."""


def recent(history: Sequence[str], ctx: AgentCFContext) -> list[str]:
    """The last `agentcf_history_items` visible interactions (all when 0)."""
    n = ctx.agentcf_history_items
    return list(history[-n:]) if n > 0 else list(history)


def fallback_scores(
    env: Environment, ctx: AgentCFContext, memory: str, memories: Mapping[str, str],
    candidates: Sequence[str], history: Sequence[str], past: Sequence[str],
) -> dict[str, float]:
    """The fallback's score per candidate (module docstring)."""
    side = ""
    if ctx.agentcf_ranking == "sequential":
        side = history_memory(env.dataset.items, recent(history, ctx), 10**6)
    elif ctx.agentcf_ranking == "retrieval":
        side = " ".join(past)
    scores = {}
    top = math.log1p(max(env.popularity.values(), default=0))
    for c in candidates:
        item = env.dataset.items[c]
        score = affinity(memory, item, memories[c], DISLIKE_WEIGHT)
        if side:
            score += SIDE_WEIGHT * affinity(side, item, memories[c], DISLIKE_WEIGHT)
        if top > 0:
            score += POPULARITY_WEIGHT * math.log1p(env.popularity.get(c, 0)) / top
        scores[c] = round(score, 9)
    return scores  # fmt: skip


def fallback_order(env: Environment, candidates: Sequence[str], scores: Mapping[str, float]) -> list[str]:
    """Candidates by score, then training popularity, then the order given."""
    position = {c: n for n, c in enumerate(candidates)}
    return sorted(candidates, key=lambda c: (-scores[c], -env.popularity.get(c, 0), position[c]))


def candidate_memories(
    env: Environment, ctx: AgentCFContext, memories: Mapping[str, str], candidates: Sequence[str],
    user_id: str | None, instruction: str | None,
) -> str:
    """`[id] "<item agent's memory>"` per candidate with its description and reviews below (the
    evidence contract's T(i)), then the request line when there is an instruction."""
    heads = {item: f"[{item}] {quote(memories[item], ctx.agentcf_item_chars)}" for item in candidates}
    block = item_text_block(env, candidates, ctx, heads=heads)
    request = request_line(instruction_for(env, user_id, instruction, ctx))
    return f"{block}\n\n{request}" if request else block


def rank_task(
    env: Environment, ctx: AgentCFContext, memory: str, memories: Mapping[str, str],
    candidates: Sequence[str], history: Sequence[str], past: Sequence[str],
    user_id: str | None = None, instruction: str | None = None,
) -> tuple[AgentTask[RankedList], dict[str, float]]:
    """The user agent's ranking task for one request, and the fallback's scores. Each candidate is
    its item agent's memory with the evidence contract's description and reviews below it, and the
    request line (`prompts.evidence`) follows the list."""
    scores = fallback_scores(env, ctx, memory, memories, candidates, history, past)
    order = fallback_order(env, candidates, scores)
    slots = {
        "user_memory": quote(memory, ctx.agentcf_user_chars),
        "candidates": candidate_memories(env, ctx, memories, candidates, user_id, instruction),
    }
    prompt = RANK_BASIC
    if ctx.agentcf_ranking == "sequential":
        prompt, slots["history"] = RANK_SEQUENTIAL, item_block(env.dataset, recent(history, ctx))
    elif ctx.agentcf_ranking == "retrieval":
        shown = "\n".join(f"- {quote(p, ctx.agentcf_user_chars)}" for p in past) or "(none yet)"
        prompt, slots["past"] = RANK_RETRIEVAL, shown
    messages = prompt.format_messages(**slots)

    def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
        ranking, repairs = repair_ranking(answer.ranking, candidates)
        return RankedList(ranking=ranking, reason=" ".join(answer.reason.split())[:200]), repairs

    def fallback() -> RankedList:
        return RankedList(ranking=order, reason=f"memory affinity ({ctx.agentcf_ranking}), then popularity")

    task = AgentTask(
        agent="user_agent",
        role="rec",
        messages=messages,
        schema=RankedList,
        validate=validate,
        fallback=fallback,
        json_schema=ranking_json_schema(list(candidates)),
        ranked_ids=lambda answer: answer.ranking,
    )
    return task, scores  # fmt: skip
