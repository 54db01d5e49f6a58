"""ChainRec trajectories: training tasks are validation interactions in a world without the test
interaction (the test target never appears), chains are enumerated or sampled under the mask and
budget, tool answers do not depend on the order tools run in (so one answer per (task, tool) is
reused), the fusion shortcut ranks exactly like CandidateRank's fallback, and an interrupted file
resumes to the same rows (read back with their repeated strings shared)."""

from __future__ import annotations

import json
from pathlib import Path

from agents.base import AgentResult
from agents.chainrec.offline.chains import chain_actions, count_chains
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import TrajectoryConfig, training_tasks
from agents.chainrec.offline.trajectories import FILE_NAME, TaskRunner, generate, read_rows
from agents.chainrec.online.candidate_rank import rank_call
from agents.chainrec.online.catalog import BY_NAME, CANDIDATE_RANK
from agents.chainrec.online.library import LIBRARY
from agents.chainrec.online.tool_agent import Episode, memory_entry
from agents.usage import AgentUsage
from state.chainrec.context import ChainRecContext
from tools.chainrec.episode_tools import EpisodeScope
from world.environment import get_environment

SMALL = TrajectoryConfig(dataset="ml-100k", tasks=3, candidates=8, chain_cap=40, lam=0.01)


def test_training_tasks_use_the_last_training_item_never_the_validation_or_test(tmp_path: Path) -> None:
    env = get_environment("ml-100k")
    run = generate(env, ChainRecContext(), SMALL, tmp_path)
    rows = read_rows(run.path)
    assert run.tasks == 3 and len(rows) == 3
    train = training_environment(env)
    for row in rows:
        case = env.cases[row["user_id"]]
        test_item = case.target.item_id
        assert row["task"]["target"] == case.history[-1].item_id not in {test_item, case.valid.item_id}
        assert test_item not in row["task"]["candidates"] and len(row["task"]["candidates"]) == 8
        assert row["facts"]["history_items"] == len(case.history) - 1  # everything before the target
        for held_out in (case.target, case.valid):  # neither is in the training world
            kept = {(e.user_id, e.item_id, e.timestamp) for e in train.dataset.interactions}
            assert (row["user_id"], held_out.item_id, held_out.timestamp) not in kept
        text = json.dumps(row["tool_outputs"])
        assert f'"{test_item}"' not in text  # no tool saw or scored it
        # 6 tools fit ml-100k: 1,956 chains > the cap of 40, so 40 distinct ones are sampled
        assert count_chains(len(row["tools"]), 6) == 1956 and not row["enumerated"]
        codes = [c[0] for c in row["chains"]]
        assert len(codes) == len(set(codes)) == 40
        for code, key, value in row["chains"]:
            actions = chain_actions(row["tools"], code)
            assert actions[-1] == CANDIDATE_RANK and 1 <= len(actions) - 1 <= 6
            assert len(set(actions)) == len(actions)
            quality = row["rankings"][key]["avg_hr"]
            assert value == round(quality - 0.01 * (len(actions) - 1), 6)


def test_tool_answers_do_not_depend_on_what_ran_before() -> None:
    env = get_environment("ml-100k")
    train = training_environment(env)
    task = training_tasks(train, env, SMALL)[0]
    scope = EpisodeScope(train, task.user_id, "classic")
    runner = TaskRunner(scope, task, ChainRecContext(), list(LIBRARY)[:6])
    before = [runner.entry([], tool) for tool in ("ShortTermPreference", "PositivePreference")]
    memory = tuple({**e, "step": i + 1} for i, e in enumerate(before))
    for tool in ("LongTermPreference", "ItemSemantic", "ItemProfile", "NegativePreference"):
        fresh = LIBRARY[tool](Episode(scope, task.candidates, (), ChainRecContext()))
        later = LIBRARY[tool](Episode(scope, task.candidates, memory, ChainRecContext()))
        assert fresh.fallback == later.fallback and fresh.stats == later.stats
    assert runner.tokens == {"ShortTermPreference": 0, "PositivePreference": 0}  # heuristic: no tokens
    assert runner.chain_tokens(["PositivePreference", "ShortTermPreference"]) == 0


def test_fusion_shortcut_ranks_like_candidate_rank() -> None:
    env = get_environment("ml-100k")
    train = training_environment(env)
    task = training_tasks(train, env, SMALL)[1]
    scope = EpisodeScope(train, task.user_id, "classic")
    tools = ["LongTermPreference", "ShortTermPreference", "ItemProfile"]
    runner = TaskRunner(scope, task, ChainRecContext(), tools)
    key = runner.rank(tools)
    episode = Episode(scope, task.candidates, tuple(runner.memory(tools)), ChainRecContext())
    fallback = rank_call(episode).task.fallback()
    assert runner.rankings[key]["ranking"] == [e.item_id for e in fallback.ranked]
    spec = BY_NAME["ItemProfile"]
    fetched = LIBRARY["ItemProfile"](episode)
    direct = memory_entry(spec, AgentResult(fetched.fallback, AgentUsage(spec.node)), fetched, 0)
    assert runner.entry([], "ItemProfile") == direct


def test_an_interrupted_file_resumes_to_the_same_rows(tmp_path: Path) -> None:
    env = get_environment("ml-100k")
    whole = generate(env, ChainRecContext(), SMALL, tmp_path / "whole")
    lines = whole.path.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / FILE_NAME).write_text(lines[0] + lines[1][:50])  # one row, then half a row (a crash)
    seen: list[tuple[int, int]] = []
    resumed = generate(env, ChainRecContext(), SMALL, cut, lambda done, total: seen.append((done, total)))
    assert resumed.new == 2 and resumed.tasks == 3 and seen[-1] == (3, 3)
    rows = read_rows(whole.path)
    assert read_rows(resumed.path) == rows
    # The chain count adds the resumed row's and the new rows' (generate keeps no row in memory).
    assert whole.chains == resumed.chains == sum(len(row["chains"]) for row in rows) > 0
    # Read back with their strings shared: the same rows as the file's lines, one object per string.
    parsed = [json.loads(line) for line in lines]
    assert sorted(rows, key=lambda r: r["user_id"]) == sorted(parsed, key=lambda r: r["user_id"])
    items = [item for row in rows for ranking in row["rankings"].values() for item in ranking["ranking"]]
    assert len(items) > len(set(items))  # candidates repeat across the tool sets' rankings
    assert len({id(item) for item in items}) == len(set(items))


def test_the_export_readme_carries_the_paper_s_recipe_in_full() -> None:
    """Every hyperparameter the paper gives for its SFT and DPO stages (Sec. 5.1) is in the README
    written beside the TRL export, under the names TRL's configs use."""
    from agents.chainrec.offline.export import README_SNIPPET

    for needed in (
        "Qwen/Qwen3-8B", "nf4", "bf16=True", "gradient_checkpointing=True", 'optim="paged_adamw_8bit"',
        "max_length=512", "num_train_epochs=3", "learning_rate=2e-5", "per_device_train_batch_size=4",
        "gradient_accumulation_steps=8", "max_length=2048", "num_train_epochs=1", "learning_rate=1e-5",
        "beta=0.1", "per_device_train_batch_size=2", "gradient_accumulation_steps=16", "warmup_steps=50",
    ):  # fmt: skip
        assert needed in README_SNIPPET, needed
