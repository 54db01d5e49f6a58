"""`agentcf_commit`: the trained memories written to the `agentcf_memory` file on the server.

    START -> save_memories -> END

Training on a LangGraph deployment (graphs/agentcf/remote_training.py) runs each step's interactions
through `agentcf_train` on the server and commits their proposals in user order on the client, as
the in-process driver does (graphs/agentcf/training.py); after each step it sends the memories here,
so the served `agentcf` graphs rank from the same file. `{}` writes nothing and answers with the
memories the file holds (a rerun continues after their `steps_done`); an empty `agentcf_memory`
(Studio's example) names no file: empty memories. It writes only under `runs/remote/` (relative to
the server's folder, no `..`): the one place `remote_name` names, never a caller's path.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import StateGraph
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from graphs.common import service_input
from graphs.method_spec import REMOTE_ROOT
from graphs.nodes import one_step_graph
from graphs.run_context import compile_method, current_context
from state.agentcf.context import AgentCFContext
from state.blackboard import BlackboardMessage, append_messages, post
from tools.agentcf.store import Memories, forget, load, save
from world.errors import InvalidRecInput


class CommitInput(BaseModel):
    """The memories to write (none: only read what the file holds)."""

    model_config = ConfigDict(extra="forbid")

    user_id: str | None = Field(
        default=None, description="Optional: the user the request is filed under in traces (no effect)."
    )
    memories: dict[str, Any] | None = Field(
        default=None, description="A `tools.agentcf.store.Memories` as a JSON object; none: write nothing."
    )


class CommitOutput(TypedDict, total=False):
    """What `agentcf_commit` returns."""

    memories: dict[str, Any]
    """The memories the file holds now (empty when there is none)."""
    location: str
    """The file, as the served graphs read it (`agentcf_memory`)."""
    trace: Annotated[list[BlackboardMessage], append_messages]
    """The node's blackboard post."""


class CommitState(CommitOutput, total=False):
    """Blackboard of `agentcf_commit`."""

    user_id: str | None
    """Input: the user the request is filed under in traces."""


def _save(state: CommitState, config: RunnableConfig) -> dict[str, Any]:
    request = service_input(CommitInput, state, "CommitInput")
    location = current_context().agentcf_memory
    if not location:
        return {"memories": {}, "location": "", "trace": [post("save_memories", "no file named")]}
    path = Path(location)
    if path.is_absolute() or path.parts[:2] != tuple(REMOTE_ROOT.split("/")) or ".." in path.parts:
        raise InvalidRecInput(f"agentcf_memory {location!r}: agentcf_commit writes only under {REMOTE_ROOT}/")
    if request.memories is None:
        held = load(path)
    else:
        try:
            held = Memories(**request.memories)
        except TypeError as error:
            raise InvalidRecInput(f"CommitInput.memories is not AgentCF memories: {error}") from None
        save(path, held)  # what the file holds now: no need to read it back
        forget(location)  # the served ranking graphs read the new file
    note = f"{held.steps_done} steps of memories at {location}"
    return {"memories": asdict(held), "location": location, "trace": [post("save_memories", note)]}


def build_agentcf_commit() -> StateGraph:
    """The uncompiled commit graph."""
    return one_step_graph("save_memories", _save, CommitState, CommitInput, CommitOutput, AgentCFContext)


builder = build_agentcf_commit()
"""The commit graph, uncompiled."""
graph = compile_method(builder, "agentcf_commit")
"""AgentCF training's save step on a deployment: the memories written where the served graphs read them."""
