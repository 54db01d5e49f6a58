"""MemRec's nodes always take their async path (`warm_first_call=False` in graphs/nodes.py): concurrent
first calls for a new MemRecContext ask their LLM on the event loop, not each in a worker thread of
their own."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.outputs import ChatResult

from graphs.memrec.warmup import warmup_interaction
from state.memrec.context import MemRecContext
from tests.fakes import SchemaRoutedModel, install
from world.environment import get_environment

PATHS: list[str] = []


class PathRecordingModel(SchemaRoutedModel):
    """`SchemaRoutedModel` noting whether each call came through `ainvoke` or `invoke`."""

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        PATHS.append("sync")
        return super()._generate(messages, stop, run_manager, **kwargs)

    async def _agenerate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        PATHS.append("async")
        return super()._generate(messages, stop, run_manager, **kwargs)


FACETS = json.dumps(
    {
        "facets": [{"facet": "Space adventures", "confidence": 0.8, "supporting_neighbors": []}],
        "support_edges": [],
    }
)
"""Stage R's answer inside each write (the write graph synthesises facets before it writes)."""


def _lm_mem(messages: list[Any]) -> str:
    user = re.search(r"u:u\d", str(messages[-1].content)).group(0)  # type: ignore[union-attr]
    return json.dumps({"user_memory": f"Memory of {user}.", "item_memory": "Chosen.", "neighbor_updates": []})


def test_concurrent_first_stage_w_calls_ask_on_the_event_loop(
    tiny_dataset_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphs.memrec.write import graph

    install(monkeypatch, PathRecordingModel(answers={"MemoryWrite": _lm_mem, "FacetSet": FACETS}))
    PATHS.clear()
    env = get_environment(str(tiny_dataset_dir))
    requests = [r for u in env.cases if (r := warmup_interaction(env, u, "classic")) is not None]
    ctx = MemRecContext(
        dataset=str(tiny_dataset_dir),
        llm="openai:gpt-4o-mini",
        memrec_write_mode="propose",
        memrec_memory=str(tmp_path / "m.sqlite"),
    )

    async def run_all() -> list[dict[str, Any]]:
        return await asyncio.gather(*(graph.ainvoke(r, context=ctx) for r in requests))

    outputs = asyncio.run(run_all())
    assert len(requests) >= 3 and all(o["status"] == "proposed" for o in outputs)
    assert ["async"] * 2 * len(requests) == PATHS  # the first calls for this MemRecContext included
