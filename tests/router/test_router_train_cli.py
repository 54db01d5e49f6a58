"""`recgraph chainrec train --library router` and the held-out table's paired column."""

from __future__ import annotations

import pytest

from recgraph.chainrec.train import paired_with_best_fixed
from recgraph.cli import main
from world.synth import SynthSpec, generate
from world.synth_write import write_synth


def test_paired_with_best_fixed_pairs_only_tasks_both_planners_score() -> None:
    evaluation = {
        "per_task": {
            "best_fixed": [1.0, 0.0, 1.0, None, 0.5],
            "learned": [1.0, 1.0, 1.0, 0.0, None],
            "oracle": [1.0, 1.0, 1.0, 1.0, 1.0],
        }
    }
    paired = paired_with_best_fixed(evaluation)
    assert set(paired) == {"learned", "oracle"}
    # learned: tasks 0-2 (task 3 has no best-fixed score, task 4 no learned one): (0 + 1 + 0) / 3.
    assert paired["learned"].users == 3 and paired["learned"].difference == pytest.approx(1 / 3)
    # oracle: tasks 0, 1, 2, 4: (0 + 1 + 0 + 0.5) / 4.
    assert paired["oracle"].users == 4 and paired["oracle"].difference == pytest.approx(1.5 / 4)
    assert paired_with_best_fixed({"planners": {}}) == {}  # a checkpoint from before per-task figures


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--library", "router", "--llm", "sim"],
            "recgraph: error: --library router trains on the tools' heuristic answers only (got --llm sim): "
            "enumerated chains would cost thousands of model calls per task",
        ),
        (
            ["--cost-lam", "0"],
            "recgraph: error: --cost-lam weighs the router's planned tokens: use it with --library router",
        ),
    ],
)
def test_router_training_options_are_refused_in_one_line(
    extra: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["chainrec", "train", *extra]) == 2
    assert capsys.readouterr().err.strip() == message


def test_cli_trains_the_router_checkpoint_router_learned_reads(
    tmp_path, capsys: pytest.CaptureFixture[str]
) -> None:  # type: ignore[no-untyped-def]
    import json

    # A small catalog: the training world's SASRec, GRU4Rec and LightGCN train in seconds on it
    data = generate(SynthSpec(users=40, items=50, interactions=480, seed=5))
    catalog = str(write_synth(data, tmp_path / "catalog")[0].parent)
    planners = tmp_path / "planners"
    common = [
        "--library",
        "router",
        "--users",
        "3",
        "--candidates",
        "5",
        "--chain-cap",
        "30",
        "--dataset",
        catalog,
    ]
    assert main(["chainrec", "train", *common, "--out", str(planners)]) == 0
    out = capsys.readouterr().out
    assert "checkpoint (trained)" in out and "cost lambda 1e-06" in out and "Δavg_hr vs best fixed" in out
    assert "chains per scenario on the held-out tasks" in out
    assert "fusion (auto): " in out
    folder = next(planners.glob("all-*"))  # one planner over every scenario (--scope run)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["actions"][-9:] == [
        "MemoryNeighbourhood",
        "PatternMemories",
        "IntentEvidence",
        "CollaborativeSignal",
        "SequentialSignal",
        "GraphSignal",
        "AgentMemories",
        "RecencyRanking",
        "CandidateRank",
    ]
    assert config["trajectories"]["cost_lam"] == 1e-06
    assert json.loads((planners / "latest.json").read_text())["all"] == folder.name
    assert main(["chainrec", "train", *common, "--cost-lam", "0", "--out", str(planners)]) == 0
    assert "cost lambda 0.0" in capsys.readouterr().out
    assert len(list(planners.glob("trajectories-*"))) == 1  # one trajectory set for both weights
    assert main(["chainrec", "train", *common, "--fusion", "learned", "--out", str(planners)]) == 0
    assert "fusion (learned): learned weights" in capsys.readouterr().out
    learned = json.loads((planners / "latest.json").read_text())["all"]
    saved = json.loads((planners / learned / "config.json").read_text(encoding="utf-8"))
    assert learned != folder.name and saved["training"]["fusion"] == "learned"
    assert saved["fusion"]["used"] == "learned" and set(saved["fusion"]["weights"]) <= set(config["actions"])
    assert len(list(planners.glob("trajectories-*"))) == 1
