"""MemRec's node wrapper: `async_node` makes every async call of a `graphs.nodes` node run its
async body, the first call for a Context included.

`DualNode` runs a node's first call per Context synchronously in a worker thread (it may build
caches). Until that first call returns, every concurrent call does the same, and for an agent node
the sync body includes the LLM call: a bench wave of 16 users then holds the event loop's default
executor (6 threads on 2 cores) for a whole LLM round per 6 users, so the first wave of Stage W and
of the ranking took three rounds instead of one. MemRec's async bodies already do every blocking
step in a worker thread (SQLite, the feature index, MiniLM: `blocking=True` / `blocking_prepare`),
so they need no first call of their own.
"""

from __future__ import annotations

from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.runnables.config import ensure_config

from graphs.nodes import DualNode


class AsyncNode(DualNode):
    """A `DualNode` whose `ainvoke` always awaits the async body (see the module docstring)."""

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the async body."""
        return await self.abody(input, ensure_config(config))


def async_node(node: DualNode) -> AsyncNode:
    """`node` with `AsyncNode`'s `ainvoke` (same name and bodies)."""
    return AsyncNode(node.name, node.body, node.abody)
