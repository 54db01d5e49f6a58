"""The single-agent LLM rankers behind the LLM baselines.

Each baseline shows the model a different slice of the history, and its fallback ranks
the candidates by MiniLM cosine to the mean of exactly that slice (popularity when the
slice is empty):
- vanilla_llm: the evidence contract's most recent `Context.history_items` interactions;
- recency_llm: the last `Context.recency_llm_items` interactions (ARAG's recency baseline);
- vanilla_rag: the `Context.vanilla_rag_items` history items most similar to the user context
  (ARAG's Vanilla RAG baseline: f_Emb(u) of `tools.user_context`, u = (C_lt, C_st) with the last
  `SESSION_ITEMS` items as the session), shown in time order. The query reads the history only,
  never the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from langchain_core.prompts import ChatPromptTemplate

from agents.base import AgentTask
from agents.baselines import llmrank
from agents.ranking import ranking_json_schema, repair_ranking
from prompts import baselines as prompts
from prompts.baselines import llmrank as llmrank_prompts
from prompts.common import item_block
from prompts.evidence import candidates_evidence, shown_history
from state.baselines.context import BaselinesContext
from state.schemas import RankedList
from tools.similarity import similarity_order
from tools.user_context import SESSION_ITEMS, context_vector, split_context
from world.environment import Environment

HistorySlice = Callable[[Environment, BaselinesContext, Sequence[str], Sequence[str]], list[str]]
Slots = Callable[[Environment, list[str]], dict[str, str]]
"""(environment, shown history) -> the prompt's extra slots (LLMRank's latest item, its demonstration)."""
Profile = Callable[[list[str]], list[str]]
"""Shown history -> the items whose mean MiniLM vector the fallback ranks by (repeats weigh more)."""


def same_items(shown: list[str]) -> list[str]:
    """The fallback profiles the shown history as it is."""
    return shown


def recent_history(
    env: Environment, ctx: BaselinesContext, history: Sequence[str], candidates: Sequence[str]
) -> list[str]:
    """The evidence contract's most recent `history_items` (all when 0)."""
    return shown_history(history, ctx)


def latest_history(
    env: Environment, ctx: BaselinesContext, history: Sequence[str], candidates: Sequence[str]
) -> list[str]:
    """The last `recency_items` interactions."""
    return list(history[-ctx.recency_llm_items :]) if ctx.recency_llm_items > 0 else []


def retrieved_history(
    env: Environment, ctx: BaselinesContext, history: Sequence[str], candidates: Sequence[str]
) -> list[str]:
    """The `vanilla_rag_items` distinct history items closest to the user context's embedding
    f_Emb(u) (the candidates play no part)."""
    distinct = list(dict.fromkeys(history))
    query = context_vector(env, *split_context(history, SESSION_ITEMS))
    if query is None or not distinct:
        return []
    scores = env.item_vectors()[[env.item_index[i] for i in distinct]] @ query
    keep = set(np.argsort(-scores, kind="stable")[: ctx.vanilla_rag_items].tolist())
    return [item for position, item in enumerate(distinct) if position in keep]


@dataclass(frozen=True)
class PromptedRanker:
    """One LLM baseline: its prompt and the history slice it shows."""

    method: str
    """Method name; the agent node is `<method>_ranker`."""
    prompt: ChatPromptTemplate
    """Prompt with {history}, {candidates} (and optionally {count}) slots."""
    history_slice: HistorySlice
    """Which history items the prompt (and the fallback) use."""
    slots: Slots | None = None
    """Extra prompt slots beyond {history}, {candidates} and {count}; None: none."""
    profile: Profile = same_items
    """What the fallback's similarity profile is made of (default: the shown items, equally)."""
    history_block: Callable[[Environment, list[str]], str] | None = None
    """How the shown history is written (default: `prompts.common.item_block`)."""

    @property
    def agent(self) -> str:
        """The agent / node name."""
        return f"{self.method}_ranker"

    def task(
        self,
        env: Environment,
        ctx: BaselinesContext,
        history: Sequence[str],
        candidates: Sequence[str],
        *,
        user_id: str | None = None,
        instruction: str | None = None,
    ) -> AgentTask[RankedList]:
        """The agent task for one user (`user_id` and `instruction` for the request line)."""
        shown = self.history_slice(env, ctx, history, candidates)
        fallback_order = similarity_order(env, self.profile(shown), candidates)
        block = self.history_block(env, shown) if self.history_block else item_block(env.dataset, shown)
        messages = self.prompt.format_messages(
            history=block,
            candidates=candidates_evidence(env, candidates, ctx, user_id=user_id, instruction=instruction),
            count=len(shown),
            **(self.slots(env, shown) if self.slots else {}),
        )

        def validate(answer: RankedList) -> tuple[RankedList, list[str]]:
            ranking, repairs = repair_ranking(answer.ranking, candidates)
            return RankedList(ranking=ranking, reason=answer.reason), repairs

        def fallback() -> RankedList:
            basis = f"{len(shown)} history items" if shown else "popularity (no history)"
            return RankedList(ranking=fallback_order, reason=f"MiniLM similarity to {basis}")

        return AgentTask(
            agent=self.agent,
            role="rec",
            messages=messages,
            schema=RankedList,
            validate=validate,
            fallback=fallback,
            json_schema=ranking_json_schema(candidates),
            ranked_ids=lambda answer: answer.ranking,
        )


RANKERS: dict[str, PromptedRanker] = {
    "vanilla_llm": PromptedRanker("vanilla_llm", prompts.VANILLA_LLM, recent_history),
    "recency_llm": PromptedRanker("recency_llm", prompts.RECENCY_LLM, latest_history),
    "vanilla_rag": PromptedRanker("vanilla_rag", prompts.VANILLA_RAG, retrieved_history),
    "llmrank_sequential": PromptedRanker(
        "llmrank_sequential", llmrank_prompts.SEQUENTIAL, llmrank.shown_history,
        history_block=llmrank.numbered_history,
    ),
    "llmrank_recency": PromptedRanker(
        "llmrank_recency", llmrank_prompts.RECENCY, llmrank.shown_history, llmrank.recency_slots,
        llmrank.recency_profile, llmrank.numbered_history,
    ),
    "llmrank_icl": PromptedRanker(
        "llmrank_icl", llmrank_prompts.ICL, llmrank.shown_history, llmrank.icl_slots,
        history_block=llmrank.numbered_history,
    ),
}  # fmt: skip
"""LLM baseline name -> its ranker."""
