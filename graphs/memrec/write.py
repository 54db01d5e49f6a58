"""MemRec Stage W (collaborative propagation, Eq. 5-6) as a LangGraph state machine.

    START -> validate_write -> curate -> synthesise -> select_neighbours -> propagate -> commit -> END

- validate_write: the user, the item (and any candidates) must exist in the context's dataset;
- curate, synthesise: Stage R of the interaction, the same nodes as the `memrec` graph
  (graphs/memrec/graph.py), with the candidates the interaction answered (default: the item alone)
  as context: N'_k(u) and the facets M_collab the write reads;
- select_neighbours (no LLM): N'_k minus the item, and the (text, version) of every node involved;
- propagate (LM_Mem, role "mem"): ONE call reading the facets, the user's and the item's memories
  and N'_k with its memories, returning the updated user and item memories and the rewritten
  memories of the neighbours it chooses, at most `memrec_fanout_cap` (agents/memrec/write.py), with
  the deterministic memory edit as fallback;
- commit: by `Context.memrec_write_mode` — `background` queues the job durably for the shared
  background writer and returns at once (recommendation never waits for it), `sync` applies it
  before returning (reproducible benchmarks), `propose` returns the job without applying it.

Invoke with `{"user_id": ..., "item_id": ...}` (optionally `timestamp`, `job_id`, `scenario`,
`candidates`); the same interaction always yields the same job id, so a replay is applied once.
Under `memrec_use_read=False` (w/o Collab. Read) N'_k is empty: the write updates the user and the
item only. Under `memrec_propagate=False` (w/o Collab. Write) Stage R runs as usual (the write reads
its facets) but no neighbour is offered: self-reflection (Eq. 5) without propagation (Eq. 6).
"""

from __future__ import annotations

import operator
from dataclasses import asdict
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from agents.base import AgentResult
from agents.memrec.feature_index import feature_index
from agents.memrec.write import write_job, write_job_id, write_task
from graphs.common import dataset_not_loaded, service_input
from graphs.memrec.graph import curate_node, synthesise
from graphs.nodes import AgentCall, agent_node, step_node
from graphs.run_context import compile_method, current_context
from state.blackboard import BlackboardMessage, append_messages, post
from state.memrec.context import MemRecContext
from state.memrec.schemas import MemoryWrite
from state.memrec.state import FacetRecord, MemRecState
from tools.memrec.graph import item_node, user_node
from tools.memrec.writer import shared_writer
from world.environment import Environment, get_environment
from world.errors import RecgraphError

WRITE_MODES = ("background", "sync", "propose")
"""Values of `Context.memrec_write_mode`."""


class WriteInput(BaseModel):
    """One interaction to propagate."""

    model_config = ConfigDict(extra="forbid")

    user_id: str = Field(description="The user who interacted (an id of the context's dataset).")
    item_id: str = Field(description="The item they interacted with.")
    timestamp: float | None = Field(default=None, description="When; part of the job id.")
    job_id: str | None = Field(default=None, description="Explicit job id (default: from the interaction).")
    scenario: str = Field(default="classic", description="Which part of the user's history Stage R sees.")
    candidates: list[str] | None = Field(
        default=None,
        description="The candidates the interaction answered (Stage R's context; default: the item).",
    )


class WriteJob(TypedDict, total=False):
    """The write's own results: fields of `memrec_write`'s blackboard (`WriteState`) and of what it
    returns (`WriteOutput`), each with one writer."""

    job_id: str
    """Written by `validate_write`: the propagation job's id."""
    status: str
    """Written by `commit`: "queued" (background), "applied" (sync) or "proposed" (propose)."""
    neighbours: list[str]
    """Written by `commit`: neighbours whose memory the job updates."""
    job: dict[str, Any]
    """Written by `commit`: the job itself (node updates), as stored in the writer's queue."""


class WriteOutput(WriteJob, total=False):
    """What `memrec_write` returns: the job (`WriteJob`), and Stage R's posts, usage and facets."""

    trace: Annotated[list[BlackboardMessage], append_messages]
    """Every node's blackboard posts, in order."""
    usage: Annotated[list[dict[str, Any]], operator.add]
    """The usage records of Stage R's synthesis and of the Stage W agent."""
    facets: list[FacetRecord]
    """The Stage R facets the write read (M_collab)."""


class WriteState(MemRecState, WriteJob, total=False):
    """Blackboard of `memrec_write`: Stage R's fields (`MemRecState`), the write's results
    (`WriteJob`) and its working fields below; each field has exactly one writer."""

    item_id: str
    """Input: the item."""
    timestamp: float | None
    """Input: when the interaction happened."""
    offered: list[str]
    """Written by `select_neighbours`: N'_k of the interaction minus the item, offered to LM_Mem."""
    memories: dict[str, list[Any]]
    """Written by `select_neighbours`: [text, version] of the user, the item and the offered nodes."""
    proposal: dict[str, Any]
    """Written by `propagate`: the validated `MemoryWrite`."""
    rewrite: bool
    """Written by `propagate`: True when the model answered (neighbours are rewritten), False for the
    fallback's edits (appended)."""


def _validate_write(state: WriteState, config: RunnableConfig) -> dict[str, Any]:
    request = service_input(WriteInput, state, "WriteInput")
    ctx = current_context()
    if ctx.memrec_write_mode not in WRITE_MODES:
        raise RecgraphError(
            f"memrec_write_mode must be one of {', '.join(WRITE_MODES)}, got {ctx.memrec_write_mode!r}"
        )
    env = get_environment(ctx.dataset)
    env.require_user(request.user_id)
    candidates = request.candidates or [request.item_id]
    env.require_items([request.item_id, *candidates])
    job_id = request.job_id or write_job_id(
        env.dataset.name, request.user_id, request.item_id, request.timestamp
    )
    note = f"interaction ({request.user_id}, {request.item_id}) -> job {job_id}"
    return {
        **request.model_dump(),
        "candidates": candidates,
        "history": env.history(request.user_id, request.scenario),
        "retrieve_mode": False,
        "job_id": job_id,
        "trace": [post("validate_write", note)],
    }


def _memories(state: WriteState) -> dict[str, tuple[str, int]]:
    """The (text, version) pairs `select_neighbours` read, back from their JSON-friendly lists."""
    return {node: (text, version) for node, (text, version) in state["memories"].items()}


def _select(state: WriteState, config: RunnableConfig) -> dict[str, Any]:
    ctx = current_context()
    index = feature_index(get_environment(ctx.dataset), ctx.memrec_memory)
    user, item = state["user_id"], state["item_id"]
    curated = [r["id"] for r in state.get("curated", []) if r["id"] != item_node(item)]
    # w/o Collab. Write: Eq. 5 alone, so no neighbour is offered (Stage R's facets are still read).
    offered = curated if ctx.memrec_propagate else []
    memories = index.graph.memories([user_node(user), item_node(item), *offered])
    cap = max(0, ctx.memrec_fanout_cap)
    note = f"offered N'_k: {len(offered)} neighbours to LM_Mem (at most {cap} rewritten)"
    if not ctx.memrec_propagate:
        note = f"w/o Collab. Write: none of N'_k's {len(curated)} neighbours offered; user and item only"
    return {
        "offered": offered,
        "memories": {node: [text, version] for node, (text, version) in memories.items()},
        "trace": [post("select_neighbours", note)],
    }


def prepare_propagation(state: WriteState, ctx: MemRecContext, env: Environment) -> AgentCall:
    """Stage W's one LM_Mem call: new user and item memories and the chosen neighbours' rewrites."""
    index = feature_index(env, ctx.memrec_memory)
    task = write_task(
        env,
        index,
        state["user_id"],
        state["item_id"],
        state["offered"],
        _memories(state),
        max(0, ctx.memrec_fanout_cap),
        state.get("facets", []),
    )
    return AgentCall(task, proposal_update)


def proposal_update(result: AgentResult[MemoryWrite]) -> dict[str, Any]:
    """The propagate node's state update: the validated proposal, how to apply it, its usage."""
    answer, usage = result.output, result.usage
    rewrite = usage.source == "llm"
    how = "rewritten" if rewrite else "appended to"
    note = f"[{usage.source}] {len(answer.neighbor_updates)} neighbour memories {how}"
    return {
        "proposal": answer.model_dump(),
        "rewrite": rewrite,
        "trace": [post("propagate", note)],
        "usage": [usage.as_dict()],
    }


def _commit(state: WriteState, config: RunnableConfig) -> dict[str, Any]:
    ctx = current_context()
    answer = MemoryWrite.model_validate(state["proposal"])
    job = write_job(
        state["job_id"], state["user_id"], state["item_id"], answer, _memories(state), state["rewrite"]
    )
    status = "proposed"
    if ctx.memrec_write_mode != "propose":
        index = feature_index(get_environment(ctx.dataset), ctx.memrec_memory)
        shared_writer(index.graph, synchronous=ctx.memrec_write_mode == "sync").submit(job)
        status = "applied" if ctx.memrec_write_mode == "sync" else "queued"
    neighbours = [u.neighbor_id for u in answer.neighbor_updates]
    return {
        "status": status,
        "neighbours": neighbours,
        "job": asdict(job),
        "trace": [post("commit", f"job {job.job_id} {status}: user, item and {len(neighbours)} neighbours")],
    }


def build_memrec_write() -> StateGraph:
    """The uncompiled Stage W graph."""
    builder = StateGraph(
        WriteState, input_schema=WriteInput, output_schema=WriteOutput, context_schema=MemRecContext
    )
    # select_neighbours and commit read or write the SQLite memory graph, and validate_write may load
    # the dataset: off the event loop, always, so no first call needs a worker thread of its own
    # (graphs/memrec/nodes.py); propagate's prepare reads the index select_neighbours built.
    validate = step_node(
        "validate_write", _validate_write, blocking=dataset_not_loaded, warm_first_call=False
    )
    builder.add_node("validate_write", validate)
    builder.add_node("curate", curate_node)
    builder.add_node("synthesise", synthesise)
    builder.add_node(
        "select_neighbours", step_node("select_neighbours", _select, blocking=True, warm_first_call=False)
    )
    builder.add_node("propagate", agent_node("propagate", prepare_propagation, warm_first_call=False))
    builder.add_node("commit", step_node("commit", _commit, blocking=True, warm_first_call=False))
    builder.add_edge(START, "validate_write")
    builder.add_edge("validate_write", "curate")
    builder.add_edge("curate", "synthesise")
    builder.add_edge("synthesise", "select_neighbours")
    builder.add_edge("select_neighbours", "propagate")
    builder.add_edge("propagate", "commit")
    builder.add_edge("commit", END)
    return builder


builder = build_memrec_write()
"""The Stage W graph, uncompiled."""
graph = compile_method(builder, "memrec_write")
"""MemRec Stage W: validate -> Stage R (curate, synthesise) -> N'_k -> one LM_Mem call -> commit."""
