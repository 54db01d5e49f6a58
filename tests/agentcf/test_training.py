"""AgentCF training: replays training interactions only (a planted held-out item never reaches a
prompt or a memory), its memories do not depend on concurrency, and a run killed mid-training
resumes to the memories an uninterrupted run has."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from agents.agentcf.plan import plan_steps, replayed_positions, training_items
from graphs.agentcf import training
from graphs.agentcf.hooks import agentcf_calls, train_for_bench
from graphs.agentcf.train_graph import graph as train_graph
from graphs.agentcf.training import train_memories, training_summary
from graphs.hooks import PrepareRequest
from state.agentcf.context import AgentCFContext
from tests.agentcf.conftest import PLANTED, PLANTED_TITLE, AgentModel
from tests.fakes import install
from tools.agentcf.store import load
from world.environment import get_environment
from world.errors import InvalidRecInput

LLM = "openai:gpt-4o-mini"  # any model backend: `install` answers in its place
USERS = ["a", "b", "c", "d", "e", "f"]


def test_the_plan_replays_training_interactions_only(shape_dataset: str) -> None:
    env = get_environment(shape_dataset)
    ctx = AgentCFContext(dataset=shape_dataset, agentcf_interactions_per_user=3)
    assert training_items(env, "a") == ["1", "4", "8", "11", "6", "4"]  # 8 items: last two held out
    assert replayed_positions(env, "a", ctx) == [3, 4, 5]
    assert replayed_positions(env, "a", replace(ctx, agentcf_interactions_per_user=0)) == list(range(6))
    steps = plan_steps(env, ["c", "a", "b"], ctx)
    assert [[i.user_id for i in step] for step in steps] == [["a", "b", "c"]] * 3
    for step in steps:
        for i in step:
            assert i.positive == training_items(env, i.user_id)[i.position]
            assert i.negative not in training_items(env, i.user_id)
    assert plan_steps(env, ["c", "a", "b"], ctx) == steps  # seeded: the same negatives again
    capped = plan_steps(env, ["c", "a", "b"], replace(ctx, agentcf_train_users=2))
    assert {i.user_id for step in capped for i in step} == {"a", "c"}  # the first two of the run, by id
    with pytest.raises(InvalidRecInput, match="position 6 is outside user 'a'"):
        train_graph.invoke({"user_id": "a", "position": 6}, context=ctx)


@pytest.mark.parametrize("backend", ["heuristic", "model"])
def test_a_planted_held_out_item_reaches_no_prompt_and_no_memory(
    planted_dataset: str, backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = install(monkeypatch, AgentModel()) if backend == "model" else None
    ctx = AgentCFContext(
        dataset=planted_dataset, llm=LLM if model else "heuristic", agentcf_interactions_per_user=0
    )
    env = get_environment(planted_dataset)
    run = train_memories(env, ctx, USERS, concurrency=2)
    replayed = [(i.positive, i.negative) for step in run.plan for i in step]
    assert len(replayed) == 3 * 4 + 3 * 4  # a: 3 training items, b, c: 4 ... (see the fixture)
    assert all(PLANTED not in pair for pair in replayed)
    memories = load(run.path)
    assert PLANTED not in memories.items and memories.items  # trained, and 99 untouched
    logged = [t for log in memories.user_log.values() for t in log]
    texts = [*memories.users.values(), *memories.items.values(), *logged]
    assert not any(PLANTED_TITLE.lower() in t.lower() or "mystery" in t.lower() for t in texts)
    if model is not None:
        assert model.received and not any(
            PLANTED_TITLE in p or f"[{PLANTED}]" in p for p in model.prompts()
        )


def test_training_counts_choices_and_reflections(shape_dataset: str) -> None:
    ctx = AgentCFContext(dataset=shape_dataset, agentcf_interactions_per_user=2)
    run = train_memories(get_environment(shape_dataset), ctx, ["a", "b"], concurrency=1)
    summary = training_summary(run)
    assert summary["steps"] == 2 and summary["interactions"] == 4 and summary["users"] == 2
    # every first pick reflects (a wrong one, and a right one too by default); a second round only
    # follows a wrong first pick
    outcomes = run.memories.outcomes
    assert outcomes["interactions"] == 4 and outcomes["reflections"] >= 4
    assert outcomes["rounds"] == 4 + (4 - outcomes["first_right"])
    assert len(run.memories.user_log["a"]) == 2 and run.memories.users["a"] == run.memories.user_log["a"][-1]
    assert summary["llm_calls"] == 0 and not summary["reused"]
    again = training_summary(train_memories(get_environment(shape_dataset), ctx, ["a", "b"], 1))
    assert again["reused"] and again["this_run"]["steps"] == 0
    assert again["fingerprint"] == summary["fingerprint"]
    other = train_memories(get_environment(shape_dataset), replace(ctx, agentcf_rounds=1), ["a", "b"], 1)
    assert other.path != run.path  # another knob, another checkpoint


def test_concurrency_does_not_change_the_memories(
    shape_dataset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(monkeypatch, AgentModel())
    env = get_environment(shape_dataset)
    ctx = AgentCFContext(dataset=shape_dataset, llm=LLM)
    one = train_memories(env, ctx, USERS, concurrency=1)
    fingerprint = one.memories.fingerprint()
    one.path.unlink()
    five = train_memories(env, ctx, USERS, concurrency=5)
    assert five.memories.fingerprint() == fingerprint
    assert training_summary(five)["llm_calls"] > 0


class Killed(Exception):
    pass


@pytest.mark.parametrize("backend", ["heuristic", "model"])
def test_a_run_killed_mid_training_resumes_to_the_same_memories(
    shape_dataset: str, backend: str, monkeypatch: pytest.MonkeyPatch, own_home: Path
) -> None:
    model = install(monkeypatch, AgentModel()) if backend == "model" else None
    env = get_environment(shape_dataset)
    backend_spec = LLM if model else "heuristic"
    ctx = AgentCFContext(dataset=shape_dataset, llm=backend_spec, agentcf_interactions_per_user=4)
    whole = train_memories(env, ctx, USERS, concurrency=3)
    expected = whole.memories.fingerprint()
    whole.path.unlink()

    original = training.commit
    commits: list[int] = []

    def die_in_step_3(*args: object) -> list:
        commits.append(1)
        if len(commits) == 3:  # steps 1 and 2 are saved; step 3's calls are done, its commit dies
            raise Killed
        return original(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(training, "commit", die_in_step_3)
    with pytest.raises(Killed):
        train_memories(env, ctx, USERS, concurrency=3)
    assert load(whole.path).steps_done == 2
    monkeypatch.setattr(training, "commit", original)
    calls_before = len(model.received) if model else 0
    resumed = train_memories(env, ctx, USERS, concurrency=2)
    assert resumed.steps_before == 2 and training_summary(resumed)["this_run"]["steps"] == 2
    assert resumed.memories.fingerprint() == expected
    if model is not None:  # only steps 3 and 4 were asked again
        assert 0 < len(model.received) - calls_before < calls_before


def test_prepare_hook_points_the_ranking_at_the_trained_memories(shape_dataset: str, tmp_path: Path) -> None:
    ctx = AgentCFContext(dataset=shape_dataset)
    request = PrepareRequest(
        method="agentcf", users=["b", "a"], scenario="classic", protocol={"dataset": shape_dataset},
        work_dir=tmp_path, concurrency=2, context=ctx,
    )  # fmt: skip
    prepared = train_for_bench(request)
    path = Path(prepared.context.agentcf_memory)
    assert path.is_file() and path.parent.name == "agentcf"
    assert prepared.metrics["training"]["interactions"] == 6  # 2 users x 3 replayed interactions
    assert set(load(path).users) == {"a", "b"}
    assert agentcf_calls(ctx, 10).per_user == 1 + 3 * 2 * 3 and agentcf_calls(ctx, 10).at_most
    assert agentcf_calls(replace(ctx, agentcf_interactions_per_user=0), 10).per_user == 1
