"""The learned planner π_θ(a | s) at inference: a two-layer MLP over the state features of
features.py, scored with numpy (no torch at serving time), and where its checkpoints live.

A checkpoint is a folder (written by policy_train.py):
    config.json   what it was trained on and how (trajectory config, training config, feature names)
    sft.npz       weights after SFT (Eq. 10)
    dpo.npz       weights after DPO (Eq. 11), absent for an SFT-only training
    curves.json / curves.png / evaluation.json
Bench and CLI checkpoints live under `<dataset cache>/chainrec_planner/<scope>-<key>/`, where the
scope is `RUN_SCOPE` ("all": one planner over every scenario, `chainrec_planner_scope` = "run", the
paper's) or the scenario (the per-scenario ablation); on AgentRecBench's release layout the dataset is
the release's training corpus (`planner_dataset`), so every scenario's run finds the same one.
`latest.json` beside them names the newest one per scope and planner state (`latest_key`), which
the learned planner uses when
`chainrec_checkpoint` is empty (Studio, `graph.invoke()`); `recgraph bench` always names the
checkpoint its protocol trained, so a run never depends on what else the cache holds.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.chainrec.online.catalog import CANDIDATE_RANK, EVIDENCE_TOOLS, TOOLS, Catalog, evidence_tools
from world.paths import dataset_cache

ACTIONS: tuple[str, ...] = (*EVIDENCE_TOOLS, CANDIDATE_RANK)
"""The policy's output units over ChainRec's catalog, in order."""


@dataclass(frozen=True)
class ActionSpace:
    """What a policy plans over: a tool catalog (ChainRec's by default, or an extended library), its
    evidence tools (the used-tool features) and its actions (the output units, CandidateRank last)."""

    catalog: Catalog = TOOLS
    """The catalog's tool specs, CandidateRank last."""

    @classmethod
    def default(cls) -> ActionSpace:
        """ChainRec's 8-tool library."""
        return cls(TOOLS)

    @property
    def tools(self) -> tuple[str, ...]:
        """The evidence tools, in catalog order."""
        return evidence_tools(self.catalog)

    @property
    def actions(self) -> tuple[str, ...]:
        """Every action (the policy's output units), in catalog order."""
        return (*self.tools, CANDIDATE_RANK)


FORMAT_VERSION = 3
"""Bumped when the checkpoint layout or the feature vector changes (older ones are not loaded).
2: config.json's `actions` (a catalog's) fix the output units and the used-tool features.
3: config.json's `state` (features.STATES) fixes what the vector reads; "memory" is Eq. 2's."""
ROOT = "chainrec_planner"
LATEST = "latest.json"
RUN_SCOPE = "all"
"""The key of a planner trained over every scenario (`chainrec_planner_scope` = "run")."""


def planner_key(scenario: str, scope: str) -> str:
    """What a checkpoint is keyed by: `RUN_SCOPE` for one planner over the run's scenarios, else the
    scenario (the per-scenario ablation)."""
    return RUN_SCOPE if scope == "run" else scenario


def planner_dataset(dataset_spec: str, scope: str) -> str:
    """The dataset a planner of `scope` trains on and is looked up under: for one planner over every
    scenario of AgentRecBench's release layout, the release's training corpus (its users in no task
    folder, world/loaders/agentrecbench.py); else `dataset_spec` itself."""
    from world.loaders.agentrecbench import corpus_spec

    corpus = corpus_spec(dataset_spec) if scope == "run" else None
    return corpus or dataset_spec


@dataclass(frozen=True)
class PolicyWeights:
    """The MLP's parameters: logits = relu(x W1 + b1) W2 + b2."""

    w1: np.ndarray
    """(features, hidden)."""
    b1: np.ndarray
    """(hidden,)."""
    w2: np.ndarray
    """(hidden, actions)."""
    b2: np.ndarray
    """(actions,)."""

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Unmasked action logits of one state vector or a batch of them."""
        hidden = np.maximum(x @ self.w1 + self.b1, 0.0)
        return hidden @ self.w2 + self.b2

    def save(self, path: Path) -> None:
        """Write the weights as an .npz file."""
        np.savez(path, w1=self.w1, b1=self.b1, w2=self.w2, b2=self.b2)

    @classmethod
    def load(cls, path: Path) -> PolicyWeights:
        """Read weights written by `save`."""
        with np.load(path) as data:
            return cls(data["w1"], data["b1"], data["w2"], data["b2"])


def masked_log_probs(logits: np.ndarray, feasible: list[bool]) -> np.ndarray:
    """log π(a | s) over the policy's actions with infeasible actions at -inf."""
    masked = np.where(np.asarray(feasible), logits.astype(np.float64), -np.inf)
    top = masked.max()
    return masked - (top + np.log(np.exp(masked - top).sum()))


def checkpoint_root(dataset_spec: str) -> Path:
    """Where a dataset's planner checkpoints live (its cache folder)."""
    from world.environment import get_environment

    return dataset_cache(get_environment(dataset_spec).dataset) / ROOT


def latest_key(scenario: str, state: str = "memory") -> str:
    """latest.json's key of a scenario's newest checkpoint trained on `state` (the memory state's
    is the bare scenario; the scenario-aware ablation's "<scenario>@scenario")."""
    return scenario if state == "memory" else f"{scenario}@{state}"


def checkpoint_state(config: dict[str, Any]) -> str:
    """The planner state a checkpoint's config.json was trained on."""
    return str(config.get("state") or config.get("training", {}).get("state") or "scenario")


def read_latest(root: Path) -> dict[str, str]:
    """scenario -> newest checkpoint folder name under `root` (empty when none)."""
    path = root / LATEST
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


_found: dict[tuple[str, str, str, str], Path | None] = {}


def mark_latest(root: Path, scenario: str, folder: Path, state: str = "memory") -> None:
    """Record `folder` as the newest checkpoint of `scenario` on `state` (atomic replace). Processes
    recording at once (`bench --workers` trains planners side by side) take turns on a lock, so none
    loses another's entry."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / (LATEST + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        latest = {**read_latest(root), latest_key(scenario, state): folder.name}
        temporary = root / f"{LATEST}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(latest, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(temporary, root / LATEST)
    _found.clear()


def is_resolved(dataset_spec: str, scenario: str, explicit: str = "", state: str = "memory") -> bool:
    """True when `find_checkpoint` with these arguments answers from memory (no disk access)."""
    return (dataset_spec, scenario, explicit, state) in _found


def find_checkpoint(
    dataset_spec: str, scenario: str, explicit: str = "", state: str = "memory"
) -> Path | None:
    """The checkpoint to plan with: `explicit` when given, else the newest for the dataset and
    scenario trained on `state` in this format (never another scenario's or state's); None when there
    is none. Looked up once per process (reads the disk: call it off the event loop first;
    `mark_latest` forgets the answers)."""
    key = (dataset_spec, scenario, explicit, state)
    if key not in _found:
        _found[key] = _find(dataset_spec, scenario, explicit, state)
    return _found[key]


def usable(folder: Path, state: str) -> bool:
    """True when `folder` holds a checkpoint of this format trained on `state`."""
    path = folder / "config.json"
    if not path.is_file():
        return False
    config = json.loads(path.read_text(encoding="utf-8"))
    return config.get("format_version") == FORMAT_VERSION and checkpoint_state(config) == state


def _find(dataset_spec: str, scenario: str, explicit: str, state: str) -> Path | None:
    if explicit:
        return Path(explicit) if (Path(explicit) / "config.json").is_file() else None
    root = checkpoint_root(dataset_spec)
    name = read_latest(root).get(latest_key(scenario, state))
    return root / name if name and usable(root / name, state) else None


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: its folder, config and the weights of one stage."""

    folder: Path
    """Where it was read from."""
    config: dict[str, Any]
    """config.json."""
    stage: str
    """"sft" or "dpo"."""
    weights: PolicyWeights
    """The stage's weights."""

    @property
    def label(self) -> str:
        """How traces name it: stage and folder."""
        return f"{self.stage} {self.folder.name}"


_loaded: dict[tuple[str, str, float], Checkpoint] = {}
_lock = threading.Lock()


def is_loaded(folder: Path, stage: str) -> bool:
    """True when `load_checkpoint(folder, stage)` is a dictionary look-up (no disk read)."""
    try:
        key = (str(folder), stage, (folder / "config.json").stat().st_mtime)
    except OSError:
        return False
    return key in _loaded


def load_checkpoint(folder: Path, stage: str) -> Checkpoint:
    """Read (once per process) the `stage` weights of the checkpoint at `folder`; an SFT-only
    checkpoint serves "dpo" with its SFT weights and says so in `stage`."""
    key = (str(folder), stage, (folder / "config.json").stat().st_mtime)
    with _lock:
        if key not in _loaded:
            config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
            if config.get("format_version") != FORMAT_VERSION:
                from world.errors import RecgraphError

                raise RecgraphError(
                    f"{folder}: planner checkpoint format {config.get('format_version')}, this version "
                    f"reads {FORMAT_VERSION}; retrain with `recgraph chainrec train`"
                )
            used = stage if (folder / f"{stage}.npz").is_file() else "sft"
            _loaded[key] = Checkpoint(folder, config, used, PolicyWeights.load(folder / f"{used}.npz"))
        return _loaded[key]
