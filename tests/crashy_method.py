"""A test-only method with a planted failure: `crashy` ranks by popularity through the shared node
factory and raises `ValueError("planted failure")` in its `crashy_ranker` node for the users in
`CRASH_ON`; `PREPARE_FAILS` makes its prepare hook raise instead. `RANKED` lists every user the
node was asked to rank (what a resumed run redoes).

Tests register it as a method by its "module:attribute" references (`tests.crashy_method:graph`,
`tests.crashy_method:prepare`), which the registry imports, so it is a module and not a fixture."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from langgraph.graph import END, START, StateGraph

from agents.baselines.classic import score_popularity
from graphs.baselines.classic import make_ranker_node
from graphs.common import VALIDATE_NODE, validate_input
from graphs.hooks import Prepared, PrepareRequest
from graphs.run_context import compile_method
from state.base_state import BaseState
from state.context import Context
from state.contract import RecInput, RecOutput

CRASH_ON: set[str] = set()
RANKED: list[str] = []
PREPARE_FAILS: list[bool] = [False]


def score(
    env: Any, ctx: Context, user: str, history: Sequence[str], items: Sequence[str], scenario: str
) -> Any:
    """Popularity scores, except for a planted user."""
    RANKED.append(user)
    if user in CRASH_ON:
        raise ValueError("planted failure")
    return np.asarray(score_popularity(env, ctx, user, history, items, scenario))


def prepare(request: PrepareRequest) -> Prepared:
    """A short warm-up phase reported as "crashy · warm-up" (or a failure, when told to fail)."""
    if PREPARE_FAILS[0]:
        raise RuntimeError("planted failure while preparing")
    if request.on_progress:
        request.on_progress("crashy · warm-up", 0, 2)
        time.sleep(0.05)
        request.on_progress("crashy · warm-up", 2, 2)
    return Prepared(request.context)


builder = StateGraph(BaseState, input_schema=RecInput, output_schema=RecOutput, context_schema=Context)
builder.add_node(VALIDATE_NODE, validate_input)
builder.add_node("crashy_ranker", make_ranker_node("crashy", score, "popularity"))
builder.add_edge(START, VALIDATE_NODE)
builder.add_edge(VALIDATE_NODE, "crashy_ranker")
builder.add_edge("crashy_ranker", END)
graph = compile_method(builder, "crashy")
