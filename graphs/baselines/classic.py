"""Classic (non-LLM) baselines as graphs on the shared contract.

Each graph is `validate_input -> <name>_ranker -> END`. Exports one compiled graph
per baseline (`random_graph`, `popularity_graph`, ...) and their `builders`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph

from agents.baselines.classic import SCORERS, Scorer
from graphs.common import VALIDATE_NODE, validate_input
from graphs.nodes import DualNode, step_node
from graphs.run_context import compile_method, current_context
from state.base_state import BaseState
from state.baselines.context import BaselinesContext
from state.blackboard import post
from state.contract import RecInput, RecOutput
from tools.catalog_index import unseen_items
from tools.similarity import rank_by_scores
from world.environment import Environment, get_environment

Details = Callable[[Environment, Sequence[str], Sequence[str]], dict[str, Any]]
"""(environment, visible history, scored items) -> the user's `details` (e.g. fallback counts)."""


def make_ranker_node(name: str, scorer: Scorer, ranks_by: str, details: Details | None = None) -> DualNode:
    """A node that scores the candidates (or, in retrieve mode, every unseen item); `details`, when
    given, adds the user's per-method figures."""

    def rank(state: BaseState, config: RunnableConfig) -> dict[str, Any]:
        ctx = current_context()
        env = get_environment(ctx.dataset)
        history = state.get("history", [])
        retrieve = state.get("retrieve_mode", False)
        items = unseen_items(env, history) if retrieve else list(state["candidates"] or [])
        scores = scorer(env, ctx, state["user_id"], history, items, state.get("scenario", "classic"))
        ranking = rank_by_scores(items, scores)
        if retrieve:
            ranking = ranking[: ctx.top_k]
        by_item = dict(zip(items, (float(s) for s in scores), strict=True))
        kept = {item: by_item[item] for item in ranking}
        note = f"ranked {len(items)} items by {ranks_by}" + (
            f"; kept the top {len(ranking)}" if retrieve else ""
        )
        update = {
            "candidates": ranking if retrieve else state["candidates"],
            "ranking": ranking,
            "scores": kept,
            "trace": [post(f"{name}_ranker", note)],
        }
        if details is not None:
            update["details"] = details(env, history, items)
        return update

    # Blocking: the first call may train a model (BPR) or load embeddings; keep it off the loop.
    return step_node(f"{name}_ranker", rank, blocking=True)


def build_baseline(name: str) -> StateGraph:
    """The uncompiled graph of classic baseline `name`."""
    scorer, ranks_by = SCORERS[name]
    builder = StateGraph(
        BaseState, input_schema=RecInput, output_schema=RecOutput, context_schema=BaselinesContext
    )
    ranker = f"{name}_ranker"
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(ranker, make_ranker_node(name, scorer, ranks_by))
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, ranker)
    builder.add_edge(ranker, END)
    return builder


builders: dict[str, StateGraph] = {name: build_baseline(name) for name in SCORERS}
"""Uncompiled graphs by baseline name."""

random_graph = compile_method(builders["random"], "random")
popularity_graph = compile_method(builders["popularity"], "popularity")
itemknn_graph = compile_method(builders["itemknn"], "itemknn")
bpr_graph = compile_method(builders["bpr"], "bpr")
embedding_graph = compile_method(builders["embedding"], "embedding")
