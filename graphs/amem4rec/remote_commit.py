"""`amem4rec_commit`: proposed training-window plans applied to a pool, in window order, on the server.

    START -> commit_plans -> END

Training on a LangGraph deployment (graphs/amem4rec/remote_training.py) runs each round's windows
through `amem4rec_train` in "propose" mode (concurrently, on any replica, all against the pool as the
round found it), then sends the round's plans here in window order: the in-process driver's schedule
(graphs/amem4rec/training.py), so the pool is the same. The client never writes the pool. A window
already in the pool's ledger is skipped, so a request replayed on another replica changes nothing.

The answer also describes the pool for the planned windows (`windows`): which of them are applied,
their ledger rows, the pool's size, evolution histogram and fingerprint, which is what the client's
`training` summary in metrics.json is built from. `{"plans": []}` creates the pool when missing and
only describes it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from agents.amem4rec.retrieval import training_pool
from graphs.common import service_input
from graphs.nodes import one_step_graph
from graphs.run_context import compile_method, current_context
from state.amem4rec.context import Amem4RecContext
from state.blackboard import BlackboardMessage, append_messages, post
from world.database import database_url
from world.environment import get_environment


class CommitInput(BaseModel):
    """Plans (`amem4rec_train`'s `plan` outputs in propose mode) to apply, and the run's windows."""

    model_config = ConfigDict(extra="forbid")

    user_id: str | None = Field(
        default=None, description="Optional: the user the request is filed under in traces (no effect)."
    )
    plans: list[dict[str, Any]] = Field(description="Window plans, applied one after another.")
    windows: list[str] = Field(default_factory=list, description="Keys of every window the run planned.")


class CommitOutput(TypedDict, total=False):
    """What `amem4rec_commit` returns."""

    statuses: list[str]
    """Per plan: "applied" or "already applied"."""
    applied: list[str]
    """The planned windows (`windows`) now in the pool."""
    ledger: list[dict[str, Any]]
    """The pool's ledger rows of the planned windows, in apply order."""
    pool_size: int
    """Memories in the pool."""
    evolution_histogram: dict[str, int]
    """Memories per evolution count."""
    fingerprint: str
    """A digest of the pool's content."""
    pool: str
    """Where the pool lives (a folder, or its name in the database)."""
    shared: bool
    """True when the pool is in a shared database (every replica reads the same)."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """The node's blackboard post."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """Always empty: committing calls no model."""


class CommitState(CommitOutput, total=False):
    """Blackboard of `amem4rec_commit`."""

    plans: list[dict[str, Any]]
    """Input: the plans."""
    windows: list[str]
    """Input: the planned window keys."""
    user_id: str | None
    """Input: the user the request is filed under in traces."""


def _commit(state: CommitState, config: RunnableConfig) -> dict[str, Any]:
    request = service_input(CommitInput, state, "CommitInput")
    ctx = current_context()
    pool = training_pool(ctx, get_environment(ctx.dataset))
    outcomes = pool.apply_all(list(request.plans)) if request.plans else []
    planned = set(request.windows)
    ledger = [row for row in pool.ledger() if row["window_key"] in planned]
    statuses = [outcome["status"] for outcome in outcomes]
    note = f"{statuses.count('applied')} of {len(statuses)} plans applied to {pool.location}"
    return {
        "statuses": statuses,
        "applied": [row["window_key"] for row in ledger],
        "ledger": ledger,
        "pool_size": pool.size(),
        "evolution_histogram": {str(k): v for k, v in pool.evolution_histogram().items()},
        "fingerprint": pool.fingerprint(),
        "pool": pool.location,
        "shared": database_url() is not None,
        "trace": [post("commit_plans", note)],
        "usage": [],
    }


def build_amem4rec_commit() -> StateGraph:
    """The uncompiled commit graph."""
    return one_step_graph("commit_plans", _commit, CommitState, CommitInput, CommitOutput, Amem4RecContext)


builder = build_amem4rec_commit()
"""The commit graph, uncompiled."""
graph = compile_method(builder, "amem4rec_commit")
"""AMEM4Rec training's apply step: proposed window plans applied in the order given."""
