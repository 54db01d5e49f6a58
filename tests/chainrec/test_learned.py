"""ChainRec's learned planner online and in the harness: it plans from a checkpoint (numpy, no
torch), says so in the trace and the details, refuses in one line without one (never another
scenario's checkpoint, never another planner), keeps checkpoint reading and MiniLM off the event
loop; the `prepare` hook trains once on training tasks (with progress) and reuses the checkpoint;
the TRL exports carry exactly the LLM planner's prompts; the CLI runs trajectories, train and
export end to end."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agents.chainrec.offline.export import dpo_rows, sft_rows, write_jsonl
from agents.chainrec.offline.policy_store import write_checkpoint
from agents.chainrec.offline.policy_train import TrainConfig, train_policy
from agents.chainrec.offline.rollout import row_view
from agents.chainrec.online.features import missing_lines
from agents.chainrec.online.learned_planner import LearnedPlanner, MissingCheckpoint, needs_blocking
from agents.chainrec.online.mask import feasibility
from agents.chainrec.online.planners import LlmPlanner
from agents.chainrec.online.planning import PlanView
from agents.chainrec.online.policy import checkpoint_root, mark_latest
from graphs.chainrec.graph import graph
from graphs.chainrec.learned import train_for_bench
from graphs.hooks import PrepareRequest
from recgraph.cli import main
from state.chainrec.context import ChainRecContext

REQUEST = {"user_id": "1", "candidates": ["1", "50", "181", "100", "258", "7", "300"]}
PLAIN = {
    "ratings": True,
    "reviews": False,
    "categories": True,
    "timestamps": True,
    "authors": False,
    "locations": False,
}


@pytest.fixture(scope="module")
def checkpoint(
    tmp_path_factory: pytest.TempPathFactory, toy_trajectory_rows: Callable[..., list[dict[str, Any]]]
) -> Path:
    """A checkpoint trained on the toy rows (its features fit any dataset)."""
    config = TrainConfig(hidden=16, sft_epochs=60, dpo_epochs=10, eval_every=20)
    result = train_policy(toy_trajectory_rows(8), 3, 0.01, config)
    folder = tmp_path_factory.mktemp("ckpt") / "classic-toy"
    return write_checkpoint(
        folder, {"dataset": "toy", "scenario": "classic"}, config.as_dict(), result, {}, "toy"
    )


def test_checkpoint_folder_has_weights_config_and_curves(checkpoint: Path) -> None:
    assert {p.name for p in checkpoint.iterdir()} == {
        "sft.npz",
        "dpo.npz",
        "config.json",
        "curves.json",
        "curves.png",
        "evaluation.json",
    }
    config = json.loads((checkpoint / "config.json").read_text())
    assert config["stages"] == ["sft", "dpo"] and config["actions"][-1] == "CandidateRank"
    assert (checkpoint / "curves.png").read_bytes()[:4] == b"\x89PNG"


def test_learned_planner_scores_only_feasible_actions(checkpoint: Path) -> None:
    mask, notes = feasibility(["LongTermPreference"], 6, PLAIN)
    view = PlanView("1", tuple(REQUEST["candidates"]), "classic", (), mask, notes, 6, PLAIN)
    for stage in ("dpo", "sft"):
        planner = LearnedPlanner(
            ChainRecContext(
                chainrec_planner="learned", chainrec_checkpoint=str(checkpoint), chainrec_policy_stage=stage
            )
        )
        choice = planner.decide(view)
        assert planner.name == f"learned-{stage}"
        assert choice.reason.startswith(f"learned[{stage} classic-toy]")
        assert set(choice.scores) == set(view.feasible) and "LongTermPreference" not in choice.scores
        assert sum(choice.scores.values()) == pytest.approx(1.0, abs=1e-3)
        assert choice.action == max(choice.scores, key=choice.scores.get)


def test_graph_plans_with_the_checkpoint_and_says_so(checkpoint: Path) -> None:
    context = ChainRecContext(chainrec_planner="learned", chainrec_checkpoint=str(checkpoint))
    output = asyncio.run(graph.ainvoke(REQUEST, context=context))
    assert output["details"]["planner_used"] and all(
        p.startswith("learned") for p in output["details"]["planner_used"]
    )
    planner_lines = [m["content"] for m in output["trace"] if m["role"] == "planner"]
    assert any("learned[dpo classic-toy]" in line for line in planner_lines)
    assert sorted(output["ranking"]) == sorted(REQUEST["candidates"])


def test_without_a_checkpoint_the_learned_planner_refuses_in_one_line(tmp_path: Path) -> None:
    missing = ChainRecContext(chainrec_planner="learned", chainrec_checkpoint=str(tmp_path / "none"))
    expected = f"chainrec_checkpoint '{tmp_path / 'none'}' holds no trained planner (config.json)"
    with pytest.raises(MissingCheckpoint) as refused:
        graph.invoke(REQUEST, context=missing)
    assert str(refused.value) == expected


def test_a_scenario_never_borrows_another_scenario_s_checkpoint(checkpoint: Path, books: str) -> None:
    """In the per-scenario ablation (`chainrec_planner_scope` = "scenario") the dataset's latest
    classic checkpoint plans classic episodes only: a cold_user episode refuses, saying how to train
    its own (a method means one thing whatever the cache holds)."""
    root = checkpoint_root(books)
    shutil.copytree(checkpoint, root / checkpoint.name)
    mark_latest(root, "classic", root / checkpoint.name)
    context = ChainRecContext(dataset=books, chainrec_planner="learned", chainrec_planner_scope="scenario")
    planner = LearnedPlanner(context)
    assert planner.checkpoint("classic").folder == root / checkpoint.name
    with pytest.raises(MissingCheckpoint) as refused:
        planner.checkpoint("cold_user")
    train = f"recgraph chainrec train --dataset {books} --scope scenario --scenario cold_user"
    assert str(refused.value) == (
        f"no learned planner checkpoint for {books} (cold_user): train one with `{train}` "
        "(`recgraph bench --methods chainrec_learned` trains it too), or set chainrec_checkpoint"
    )


def test_blocking_work_is_announced_until_done(checkpoint: Path) -> None:
    context = ChainRecContext(chainrec_planner="learned", chainrec_checkpoint=str(checkpoint))
    memory = [{"tool": "ItemProfile", "summary": "a summary never embedded before 7f3a"}]
    assert needs_blocking(context, "classic", memory)  # checkpoint not looked up yet
    planner = LearnedPlanner(context)
    planner.checkpoint("classic")
    assert missing_lines(memory) and needs_blocking(context, "classic", memory)  # a new memory line
    assert not needs_blocking(context, "classic", [])
    assert not needs_blocking(replace(context, chainrec_planner="rule"), "classic", memory)


def test_prepare_hook_trains_once_on_training_tasks_then_reuses(books: str, tmp_path: Path) -> None:
    context = ChainRecContext(
        dataset=books, chainrec_planner="learned", chainrec_chain_cap=30, chainrec_train_tasks=10
    )
    phases: list[str] = []
    request = PrepareRequest(
        method="chainrec_learned",
        users=["u1"],
        scenario="classic",
        protocol={
            "dataset": books,
            "candidates": 4,
            "seed": 0,
            "scenario": "classic",
            "users": 1,
            "llm": "heuristic",
        },
        work_dir=tmp_path / "run",
        concurrency=1,
        context=context,
        on_progress=lambda label, done, total: phases.append(label),
    )
    first = train_for_bench(request)
    folder = Path(first.context.chainrec_checkpoint)
    assert (folder / "dpo.npz").is_file() and first.metrics["planner_training"]["reused"] is False
    assert {"chainrec_learned · trajectories", "chainrec_learned · sft", "chainrec_learned · dpo"} <= set(
        phases
    )
    training = first.metrics["planner_training"]
    assert training["trajectory_tasks"] == 3  # u1, u2, u3 have a validation item; u4 is too short
    assert set(training["heldout"]) == {"fixed", "best_fixed", "rule", "sft", "learned", "oracle"}
    phases.clear()
    again = train_for_bench(replace(request, method="chainrec_sft"))
    assert (
        again.context.chainrec_checkpoint == str(folder)
        and again.metrics["planner_training"]["reused"] is True
    )
    assert "chainrec_sft · sft" not in phases
    # reused without a world: no trajectory pass, same counts read from the file
    assert not any("trajectories" in phase for phase in phases)
    reused = again.metrics["planner_training"]
    assert (reused["trajectory_tasks"], reused["trajectory_chains"]) == (3, training["trajectory_chains"])
    output = graph.invoke({"user_id": "u1", "candidates": ["b3", "b7", "b8", "b9"]}, context=again.context)
    assert output["details"]["planner_used"][0].startswith("learned")


def test_exports_carry_the_llm_planners_prompts(
    toy_trajectory_rows: Callable[..., list[dict[str, Any]]], tmp_path: Path
) -> None:
    rows = toy_trajectory_rows(4)
    sft = list(sft_rows(rows, 3))
    dpo = list(dpo_rows(rows, 3, 2, 0))
    assert len(sft) == 8  # each best chain: one tool, then CandidateRank
    assert len(dpo) == 8
    first = sft[0]
    expected = LlmPlanner().task(row_view(rows[0], [], 3)).messages
    assert [m["content"] for m in first["prompt"]] == [m.content for m in expected]
    assert [m["role"] for m in first["prompt"]] == ["system", "user"]
    assert first["completion"][0]["role"] == "assistant"
    assert json.loads(first["completion"][0]["content"])["action"] == "LongTermPreference"
    for row in dpo:
        assert set(row) == {"prompt", "chosen", "rejected"}
        assert row["chosen"][0]["content"] != row["rejected"][0]["content"]
    assert write_jsonl(tmp_path / "sft.jsonl", iter(sft + sft)) == len(sft)  # duplicates written once
    write_jsonl(tmp_path / "dpo.jsonl", iter(dpo))
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "dpo.jsonl"))["train"]
    assert loaded.column_names == ["prompt", "chosen", "rejected"]
    assert loaded[0]["prompt"][0]["role"] == "system"


def test_cli_trajectories_train_export(
    books: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--dataset", books, "--users", "3", "--candidates", "4", "--chain-cap", "25"]
    assert main(["chainrec", "trajectories", *common]) == 0
    assert "3 training tasks (3 new), 75 chains scored" in capsys.readouterr().out
    assert main(["chainrec", "train", *common, "--sft-only", "--out", str(tmp_path / "root")]) == 0
    out = capsys.readouterr().out
    assert "checkpoint (trained)" in out and "oracle" in out
    folder = next((tmp_path / "root").glob("all-*"))  # one planner over every scenario (--scope run)
    assert (folder / "sft.npz").is_file() and not (folder / "dpo.npz").exists()
    assert main(["chainrec", "export", *common, "--format", "dpo", "--out", str(tmp_path / "x")]) == 0
    assert "DPO pairs (prompt/chosen/rejected) from 3 tasks" in capsys.readouterr().out
    readme = (tmp_path / "x" / "README.md").read_text()
    assert all(
        part in readme
        for part in ("QLoRA", "4-bit", "| 512 | 3 | 2e-5 | 4 | 8 |", "| 2048 | 1 | 1e-5 | 2 | 16 |")
    )
    pairs = [json.loads(line) for line in (tmp_path / "x" / "dpo.jsonl").read_text().splitlines()]
    assert pairs and all(
        p["prompt"][1]["role"] == "user" and p["chosen"][0]["role"] == "assistant" for p in pairs
    )
