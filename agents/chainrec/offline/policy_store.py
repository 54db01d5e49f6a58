"""Writing a trained planner checkpoint: weights, config, curves (JSON and PNG) and the held-out
planner comparison, into a fresh folder that replaces the old one only when complete."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from agents.chainrec.offline.policy_train import TrainResult
from agents.chainrec.online.features import feature_names
from agents.chainrec.online.policy import FORMAT_VERSION, ActionSpace


def plot_curves(curves: dict[str, list[dict[str, float]]], path: Path, title: str) -> None:
    """curves.png: loss, held-out expert accuracy and held-out greedy reward per epoch, SFT then DPO
    (DPO epochs continue after SFT's)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    offset = max((p["epoch"] for p in curves.get("sft", [])), default=0)
    for stage, shift in (("sft", 0), ("dpo", offset)):
        points = [p for p in curves.get(stage, []) if p["epoch"] > 0 or stage == "dpo"]
        if not points:
            continue
        epochs = [p["epoch"] + shift for p in points]
        for axis, key in zip(axes, ("loss", "heldout_accuracy", "heldout_reward"), strict=True):
            axis.plot(epochs, [p[key] for p in points], marker=".", label=stage.upper())
    for axis, label in zip(
        axes, ("training loss", "held-out expert accuracy", "held-out reward R(τ)"), strict=True
    ):
        axis.set_title(label)
        axis.set_xlabel("epoch")
        axis.legend()
    figure.suptitle(title, wrap=True)
    figure.tight_layout()
    figure.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(figure)


def write_checkpoint(
    folder: Path,
    trajectory_config: dict[str, Any],
    train_config: dict[str, Any],
    result: TrainResult,
    evaluation: dict[str, Any],
    trajectories: str,
    space: ActionSpace | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """Write the checkpoint to `folder` (built beside it, then moved into place); `config.json`
    names the actions (the output units) and the used-tool features of `space`'s catalog, plus
    `extra`'s fields (e.g. the tools a library's trajectories masked, with why)."""
    space = space or ActionSpace.default()
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    result.sft.save(partial / "sft.npz")
    if result.dpo is not None:
        result.dpo.save(partial / "dpo.npz")
    config = {
        "format_version": FORMAT_VERSION,
        "trajectories": trajectory_config,
        "trajectory_file": trajectories,
        "training": train_config,
        "stages": ["sft"] + (["dpo"] if result.dpo is not None else []),
        "actions": list(space.actions),
        "state": train_config.get("state", "memory"),
        "features": [
            *feature_names(space.tools, train_config.get("state", "memory")),
            "memory_embedding[384]",
        ],
        "data": result.data,
        "split": result.split,
        **(extra or {}),
    }
    (partial / "curves.json").write_text(json.dumps(result.curves, indent=1), encoding="utf-8")
    (partial / "evaluation.json").write_text(json.dumps(evaluation, indent=1), encoding="utf-8")
    config_of = trajectory_config
    title = (
        f"ChainRec planner: {config_of['dataset']} · {config_of['scenario']} · "
        f"{result.data.get('tasks')} tasks"
    )
    plot_curves(result.curves, partial / "curves.png", title)
    (partial / "config.json").write_text(json.dumps(config, indent=1, sort_keys=True), encoding="utf-8")
    if folder.exists():
        shutil.rmtree(folder)
    os.replace(partial, folder)
    return folder
