"""The learned router's memory part (graphs/router/ahead_parts.py `read_world_memories`): it reads
ahead the MemRec memories MemoryNeighbourhood's calls read over the planner's training tasks in the
training world, so a fresh process making those calls (the planner's step) embeds none of them, and
the vectors it finds are the bits a lazy read embeds.

The catalog is tests/baselines/test_trained.py's (24 users on a ring of 20 items, two planted items)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from graphs.hooks import PrepareRequest
from graphs.router.ahead_parts import WORLD_MEMORIES, ahead_parts, reads_world_memories
from state.router.context import RouterContext
from tests.baselines.test_trained import SMALL, write_catalog
from tests.memrec.test_memory_writer import REPO
from world.vector_memo import STORE_NAME

PROTOCOL = {"candidates": 8, "seed": 0}
"""The run's protocol as the planner's step is told it (eight candidates: the catalog has 24 items)."""

TOOL_CALLS = """
import json, sys
import world.vector_memo as memo
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import training_tasks
from agents.chainrec.online.tool_agent import Episode
from agents.router.method_tools.memory_neighbourhood import memory_neighbourhood
from graphs.router.learned import trajectory_config, training_context
from state.router.context import RouterContext
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment

knobs, protocol = json.loads(sys.argv[1]), json.loads(sys.argv[2])
embedded = []
encode = memo.embed_alone
def counted(texts):
    embedded.extend(texts)
    return encode(texts)
memo.embed_alone = counted
context = RouterContext(**knobs)
config = trajectory_config(context, protocol, "classic")
full = get_environment(config.dataset)
train = training_environment(full)
tasks = training_tasks(train, full, config)
ctx = training_context(context)
for task in tasks:  # MemoryNeighbourhood's call in a trajectory row (trajectories.py `_row`)
    memory_neighbourhood(Episode(EpisodeScope(train, task.user_id, task.scenario), task.candidates, (), ctx))
print(json.dumps({"tasks": len(tasks), "embedded": len(embedded)}))
"""


def knobs(catalog: str) -> dict[str, object]:
    """The router's context knobs (small models: the model parts are not run here)."""
    return {"dataset": catalog, "seed": 3, **SMALL}


def tool_calls(catalog: str, home: Path) -> dict[str, int]:
    """MemoryNeighbourhood over the training tasks in a fresh process on `home`: the tasks and the
    memory texts it had to embed."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "RECGRAPH_HOME": str(home)}
    args = [json.dumps(knobs(catalog)), json.dumps(PROTOCOL)]
    done = subprocess.run(
        [sys.executable, "-c", TOOL_CALLS, *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def stored(home: Path) -> dict[str, bytes]:
    """The shared vector store under `home`: digest -> vector bytes."""
    with sqlite3.connect(home / STORE_NAME) as db:
        return dict(db.execute("SELECT digest, vector FROM vectors").fetchall())


def test_the_memory_part_leaves_the_planners_tool_calls_nothing_to_embed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = write_catalog(tmp_path / "small")
    lazy = tool_calls(catalog, tmp_path / "lazy")  # no part: the calls embed what they read
    assert lazy["tasks"] > 10 and lazy["embedded"] > 0
    home = tmp_path / "ahead"
    monkeypatch.setenv("RECGRAPH_HOME", str(home))
    context = RouterContext(**knobs(catalog))  # type: ignore[arg-type]
    part = next(p for p in ahead_parts(context) if p.name == WORLD_MEMORIES)
    request = PrepareRequest("router_learned", [], "classic", PROTOCOL, tmp_path / "run", 1, context)
    read = part.run(request)
    assert read == {"classic": lazy["embedded"]}  # each text the calls embed, read once
    assert tool_calls(catalog, home) == {"tasks": lazy["tasks"], "embedded": 0}
    lazily, ahead = stored(tmp_path / "lazy"), stored(home)
    assert lazily and all(ahead[digest] == vector for digest, vector in lazily.items())  # the same bits


def test_the_memory_part_is_planned_only_when_the_trajectories_read_memories(tmp_path: Path) -> None:
    catalog = write_catalog(tmp_path / "small")
    names = [p.name for p in ahead_parts(RouterContext(**knobs(catalog)))]  # type: ignore[arg-type]
    assert names == [
        "training-world sasrec",
        "training-world gru4rec",
        "training-world lightgcn",
        WORLD_MEMORIES,
    ]
    for off in (
        {"memrec_use_read": False},
        {"memrec_curation": "candidates"},
        {"router_method_tools": False},
    ):
        context = RouterContext(**{**knobs(catalog), **off})  # type: ignore[arg-type]
        assert not reads_world_memories(context), off
        assert WORLD_MEMORIES not in [p.name for p in ahead_parts(context)], off
