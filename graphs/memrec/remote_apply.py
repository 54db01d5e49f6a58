"""`memrec_apply`: proposed Stage W jobs applied to a memory graph, in the order given, on the server.

    START -> apply_jobs -> END

The bench warm-up on a LangGraph deployment (graphs/memrec/remote_warmup.py) asks `memrec_write`
for every warm-up job in "propose" mode (from the initial memories, concurrently, on any replica),
then sends the jobs here in user-id order: the same propose-then-apply schedule as the in-process
warm-up (graphs/memrec/warmup.py), so the memory and every ranking read from it are the same. The
client never writes the memory itself. Jobs are applied synchronously and idempotently (a job id
already applied is skipped), so a request replayed on another replica changes nothing; a replica
embeds a changed memory when its rankings first read it, and saves the vector in the database for
the others (agents/memrec/feature_index.py). `{"jobs": []}` only opens (and seeds) the memory and
says where it lives.
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from typing_extensions import TypedDict

from agents.memrec.feature_index import feature_index
from graphs.common import describe_validation_error
from graphs.nodes import step_node
from graphs.run_context import compile_method, current_context
from state.blackboard import BlackboardMessage, append_messages, post
from state.contract import InvalidRecInput
from state.memrec.context import MemRecContext
from tools.memrec.writer import MemoryWriter, PropagationJob
from world.environment import get_environment


class ApplyInput(BaseModel):
    """Proposed jobs (`memrec_write`'s `job` outputs) to apply, in order."""

    model_config = ConfigDict(extra="forbid")

    user_id: str | None = Field(
        default=None, description="Optional: the user the request is filed under in traces (no effect)."
    )
    jobs: list[dict[str, Any]] = Field(description="Propagation jobs, applied one after another.")


class ApplyOutput(TypedDict, total=False):
    """What `memrec_apply` returns."""

    applied: int
    """Jobs applied by this request (jobs applied earlier are skipped)."""
    memory: str
    """The memory graph's identity: its SQLite file, or its key in the shared database."""
    shared: bool
    """True when the memory is in a shared database (every replica reads the same)."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """The node's blackboard post."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """Always empty: applying calls no model."""


class ApplyState(ApplyOutput, total=False):
    """Blackboard of `memrec_apply`."""

    jobs: list[dict[str, Any]]
    """Input: the jobs."""
    user_id: str | None
    """Input: the user the request is filed under in traces."""


def _apply(state: ApplyState, config: RunnableConfig) -> dict[str, Any]:
    try:
        request = ApplyInput.model_validate({"jobs": state.get("jobs", []), "user_id": state.get("user_id")})
    except ValidationError as error:
        raise InvalidRecInput(describe_validation_error(error).replace("RecInput", "ApplyInput")) from None
    ctx = current_context()
    index = feature_index(get_environment(ctx.dataset), ctx.memrec_memory)
    writer = MemoryWriter(index.graph, synchronous=True)
    before = writer.stats().get("done", 0)
    for job in request.jobs:
        writer.submit(PropagationJob.from_json(json.dumps(job)))
    applied = writer.stats().get("done", 0) - before
    note = f"applied {applied} of {len(request.jobs)} jobs to {index.graph.name}"
    return {
        "applied": applied,
        "memory": index.graph.name,
        "shared": index.graph.shared,
        "trace": [post("apply_jobs", note)],
        "usage": [],
    }


def build_memrec_apply() -> StateGraph:
    """The uncompiled apply graph."""
    builder = StateGraph(
        ApplyState, input_schema=ApplyInput, output_schema=ApplyOutput, context_schema=MemRecContext
    )
    builder.add_node("apply_jobs", step_node("apply_jobs", _apply, blocking=True, warm_first_call=False))
    builder.add_edge(START, "apply_jobs")
    builder.add_edge("apply_jobs", END)
    return builder


builder = build_memrec_apply()
"""The apply graph, uncompiled."""
graph = compile_method(builder, "memrec_apply")
"""MemRec Stage W's apply step: proposed jobs applied in the order given."""
