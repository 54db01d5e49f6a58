"""The trained baselines as graphs on the shared contract: SASRec, GRU4Rec, LightGCN.

Each graph is `validate_input -> <name>_ranker -> END`, the ranker scoring exactly the candidates
with the model (agents/baselines/fitted.py) and writing the user's fallback counts in `details`.
`train_for_bench` is their `prepare` hook: the model is trained (or read from the cache) before the
first user is ranked, with a "<name> training" progress row, and its figures go to metrics.json.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from agents.baselines.fitted import (
    RANKS_BY,
    TRAINED,
    fallback_details,
    fitted_model,
    is_cold_user,
    is_trained,
    make_scorer,
)
from graphs.baselines.classic import make_ranker_node
from graphs.common import VALIDATE_NODE, validate_input
from graphs.hooks import Prepared, PrepareRequest
from graphs.run_context import compile_method
from state.baselines.context import BaselinesContext
from state.baselines.state import TrainedState
from state.contract import RecInput, RecOutput
from world.environment import get_environment


def build_trained(name: str) -> StateGraph:
    """The uncompiled graph of trained baseline `name`."""
    builder = StateGraph(
        TrainedState, input_schema=RecInput, output_schema=RecOutput, context_schema=BaselinesContext
    )
    ranker = f"{name}_ranker"
    builder.add_node(VALIDATE_NODE, validate_input)
    builder.add_node(ranker, make_ranker_node(name, make_scorer(name), RANKS_BY[name], fallback_details))
    builder.add_edge(START, VALIDATE_NODE)
    builder.add_edge(VALIDATE_NODE, ranker)
    builder.add_edge(ranker, END)
    return builder


def train_for_bench(request: PrepareRequest) -> Prepared:
    """`prepare` hook: train the model (or read it from the cache) before ranking; metrics.json gets
    `training` (library, epochs, seconds, cache file, reuse) and `cold_users` among the run's users."""
    context = request.context
    assert isinstance(context, BaselinesContext)
    env = get_environment(context.dataset)
    name = request.method
    trained_before = is_trained(env, context, name)
    model = fitted_model(env, context, name)
    cold = sum(is_cold_user(env, env.history(user, request.scenario)) for user in request.users)
    # `reused`: this call trained nothing, whether the model came from the disk or from this
    # process (where its info still says how it was first made)
    training = {**model.info, "reused": trained_before or bool(model.info.get("reused"))}
    return Prepared(context, {"training": training, "cold_users": cold})


builders: dict[str, StateGraph] = {name: build_trained(name) for name in TRAINED}
"""Uncompiled graphs by trained baseline name."""

sasrec_graph = compile_method(builders["sasrec"], "sasrec")
gru4rec_graph = compile_method(builders["gru4rec"], "gru4rec")
lightgcn_graph = compile_method(builders["lightgcn"], "lightgcn")


def train_on_server(request: PrepareRequest, runner: object) -> Prepared:
    """`remote_prepare` hook: a deployment trains the model itself, in its ranker's first call (and
    reads the same cache file afterwards); nothing to do from the client."""
    return Prepared(request.context, {"training": {"where": "on the deployment, at its first user"}})
