"""`agentcf_commit` (the deployment's save step of AgentCF training), invoked in process: it writes the
memories it is given where `agentcf_memory` says, under `runs/remote/` only, answers with what the
file holds, and tells the ranking cache to read the new file."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from graphs.agentcf.remote_commit import graph
from state.agentcf.context import AgentCFContext
from tools.agentcf.store import Memories, read_only
from world.errors import InvalidRecInput

LOCATION = "runs/remote/abc123/agentcf/memories-k.json"


def test_it_writes_the_memories_and_answers_with_what_the_file_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # relative locations resolve in the server's folder
    ctx = AgentCFContext(agentcf_memory=LOCATION)
    assert graph.invoke({}, context=ctx)["memories"] == asdict(Memories())  # no file yet
    assert read_only(LOCATION).users == {}  # a ranking read it (cached) before training
    memories = Memories(users={"1": "likes noir"}, items={"50": "a space opera"}, steps_done=2)
    answer = graph.invoke({"memories": asdict(memories)}, context=ctx)
    assert answer["memories"]["steps_done"] == 2 and answer["location"] == LOCATION
    assert Memories(**answer["memories"]).fingerprint() == memories.fingerprint()
    assert (tmp_path / LOCATION).is_file()
    assert read_only(LOCATION).users == {"1": "likes noir"}  # the cache was told
    assert graph.invoke({}, context=ctx)["memories"]["items"] == {"50": "a space opera"}


@pytest.mark.parametrize("location", ["/tmp/memories.json", "runs/remote/../../x.json", "elsewhere/m.json"])
def test_it_never_writes_outside_runs_remote(
    location: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidRecInput, match="writes only under runs/remote/"):
        graph.invoke({"memories": asdict(Memories())}, context=AgentCFContext(agentcf_memory=location))


def test_without_a_file_named_it_answers_empty_memories() -> None:
    answer = graph.invoke({}, context=AgentCFContext())
    assert answer["memories"] == {} and answer["location"] == ""


def test_a_malformed_memories_object_is_refused_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InvalidRecInput, match="not AgentCF memories"):
        graph.invoke({"memories": {"agents": {}}}, context=AgentCFContext(agentcf_memory=LOCATION))
    assert not (tmp_path / LOCATION).exists()
