"""Graph runs checkpointed with LangGraph's own savers (`recgraph bench --checkpoints`).

Each user's run of a method is one LangGraph thread, `<protocol id>:<method>:<user>`, kept by
`AsyncSqliteSaver` in `<out>/checkpoints.sqlite`, or by `AsyncPostgresSaver` (its own tables,
set up once per process) when `RECGRAPH_DATABASE_URL` names a database. Design choices:

- Async savers: the runner calls `graph.ainvoke`, and the sync `SqliteSaver` refuses async calls
  (`NotImplementedError`); the sync savers serve inspection (`thread_state`, `describe_thread`).
- The checkpointer is attached to a copy of the registered graph for the run only
  (`graph.copy(update={"checkpointer": ...})`): `graphs/served.py` still hands `langgraph dev`
  graphs without one, so the server's own persistence applies there.
- Resume: a thread whose last checkpoint still has nodes to run (a crash, a kill) is continued
  with `ainvoke(None)` from the last completed super-step; a finished thread whose user is not in
  results.jsonl (it failed after the graph, e.g. its ranking was refused) is deleted and run
  afresh, since new input on a finished thread would be merged into its old state by the reducers.
- Threads live in their own file or tables, beside results.jsonl, which stays what a rerun resumes
  from: a user already logged is never run again, checkpoints or not.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.protocol.spec import Protocol
from world.database import OPEN_TIMEOUT, DatabaseError, check_url, database_url, redact

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver
    from langgraph.types import StateSnapshot

CHECKPOINTS_FILE = "checkpoints.sqlite"
"""The SQLite file of a run's threads, in its `--out` folder (when no database URL is set)."""
SAVER_POOL_SIZE = 4
"""Most connections one process's `AsyncPostgresSaver` keeps (runs share them)."""
SAVER_KWARGS = {"autocommit": True, "prepare_threshold": 0}
"""Connection settings `PostgresSaver` requires (plus `row_factory=dict_row`, set where imported)."""

_SET_UP: set[tuple[int, str]] = set()


@dataclass(frozen=True)
class Checkpoints:
    """Where one bench run keeps its threads (picklable: `--workers` processes get it in a shard)."""

    protocol_id: str
    """A short digest of the protocol, the first part of every thread id."""
    sqlite_path: str | None
    """The SQLite file of the threads, or None when they go to PostgreSQL."""
    database_url: str | None = None
    """The PostgreSQL URL of the threads, or None for the SQLite file."""

    def thread_id(self, method: str, user_id: str) -> str:
        """The thread of `method` ranking `user_id` under this protocol."""
        return f"{self.protocol_id}:{method}:{user_id}"

    def where(self) -> str:
        """The file or (redacted) database URL, for messages."""
        return self.sqlite_path or redact(self.database_url or "")


def protocol_id(protocol: Protocol | Mapping[str, Any]) -> str:
    """12 hex digits of SHA-256 over the protocol's fields (`Protocol.as_dict()`, sorted)."""
    fields = protocol.as_dict() if isinstance(protocol, Protocol) else dict(protocol)
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:12]


def checkpoints_for(out: Path, protocol: Protocol, url: str | None = None) -> Checkpoints:
    """The threads of a run writing to `out`: in `url` (default `database_url()`) when set, else in
    `out/checkpoints.sqlite`."""
    url = url or database_url()
    if url:
        check_url(url)
        return Checkpoints(protocol_id(protocol), None, url)
    return Checkpoints(protocol_id(protocol), str(Path(out) / CHECKPOINTS_FILE))


def thread_config(threads: Checkpoints, method: str, user_id: str, config: Any = None) -> RunnableConfig:
    """`config` (a run's tags, metadata, run id) with the thread of (`method`, `user_id`)."""
    found: dict[str, Any] = dict(config or {})
    thread = threads.thread_id(method, user_id)
    found["configurable"] = {**(found.get("configurable") or {}), "thread_id": thread}
    return found  # type: ignore[return-value]


@asynccontextmanager
async def async_saver(threads: Checkpoints) -> AsyncIterator[BaseCheckpointSaver]:
    """An open async saver for `threads` (its tables set up once per process), closed after."""
    if threads.database_url is None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        Path(threads.sqlite_path or CHECKPOINTS_FILE).parent.mkdir(parents=True, exist_ok=True)
        async with AsyncSqliteSaver.from_conn_string(threads.sqlite_path or CHECKPOINTS_FILE) as saver:
            yield saver
        return
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool, PoolTimeout

    url = threads.database_url
    kwargs = {**SAVER_KWARGS, "row_factory": dict_row}
    pool = AsyncConnectionPool(url, min_size=1, max_size=SAVER_POOL_SIZE, kwargs=kwargs, open=False)
    try:
        await pool.open(wait=True, timeout=OPEN_TIMEOUT)
    except PoolTimeout:
        await pool.close(timeout=0)
        raise DatabaseError(f"cannot reach the database {redact(url)} for checkpoints") from None
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        if (os.getpid(), url) not in _SET_UP:
            await saver.setup()  # idempotent: applies only the migrations the tables lack
            _SET_UP.add((os.getpid(), url))
        yield saver
    finally:
        await pool.close()


@contextmanager
def sync_saver(threads: Checkpoints) -> Iterator[BaseCheckpointSaver]:
    """An open sync saver for `threads` (for inspection, and for setting tables up before
    `--workers` processes start), closed after."""
    if threads.database_url is None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(threads.sqlite_path or CHECKPOINTS_FILE) as saver:
            yield saver
        return
    from langgraph.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(threads.database_url) as saver:  # the kwargs it requires
        if (os.getpid(), threads.database_url) not in _SET_UP:
            saver.setup()
            _SET_UP.add((os.getpid(), threads.database_url))
        yield saver


def set_up(threads: Checkpoints) -> None:
    """Create the saver's tables now (PostgreSQL: once per process; SQLite: on first use)."""
    if threads.database_url is not None:
        with sync_saver(threads):
            pass


async def ainvoke_on_thread(
    graph: Any,
    request: Mapping[str, Any],
    config: Any,
    context: Any,
    threads: tuple[Checkpoints, BaseCheckpointSaver] | None,
    method: str,
) -> dict[str, Any]:
    """`graph.ainvoke(request)`, on the user's thread when `threads` (where, the saver `graph` was
    given) is set: continued from its last checkpoint when an earlier run stopped mid-graph, else
    run from `request`."""
    if threads is None:
        return await graph.ainvoke(dict(request), config, context=context)
    config = thread_config(threads[0], method, str(request["user_id"]), config)
    snapshot = await graph.aget_state(config)
    if snapshot.next:  # stopped mid-graph: run what is left
        return await graph.ainvoke(None, config, context=context)
    if snapshot.created_at is not None:  # finished but not logged: start over on an empty thread
        await threads[1].adelete_thread(config["configurable"]["thread_id"])
    return await graph.ainvoke(dict(request), config, context=context)


def thread_state(threads: Checkpoints, method: str, user_id: str) -> StateSnapshot:
    """The latest state of (`method`, `user_id`)'s thread: `.values`, `.next` (nodes still to run),
    `.tasks` (with the error of a failed node), `.config` (its checkpoint id)."""
    from graphs.registry import get_graph

    with sync_saver(threads) as saver:
        graph = get_graph(method).copy(update={"checkpointer": saver})
        return graph.get_state(thread_config(threads, method, user_id))


def describe_thread(threads: Checkpoints, method: str, user_id: str) -> list[str]:
    """One line per checkpoint of (`method`, `user_id`)'s thread, oldest first: step, what wrote
    it, the nodes still to run and any error a node raised."""
    from graphs.registry import get_graph

    with sync_saver(threads) as saver:
        graph = get_graph(method).copy(update={"checkpointer": saver})
        config = thread_config(threads, method, user_id)
        history = list(graph.get_state_history(config))
    lines = [f"thread {config['configurable']['thread_id']} in {threads.where()}"]
    if not history:
        return [*lines, "no checkpoint"]
    for snapshot in reversed(history):
        step, source = snapshot.metadata.get("step"), snapshot.metadata.get("source")
        errors = "; ".join(f"{task.name}: {task.error}" for task in snapshot.tasks if task.error)
        waiting = ", ".join(snapshot.next) or "(finished)"
        lines.append(f"step {step} ({source}) next: {waiting}" + (f" error: {errors}" if errors else ""))
    return lines
