"""The offline pipeline in one call: trajectories (resumed when present) → SFT → DPO → checkpoint,
keyed by everything that fixes it, so a repeated call reuses what exists.

Layout under a root folder (default: the dataset's cache, policy.checkpoint_root):
    trajectories-<key>/trajectories.jsonl    the training tasks' scored chains
    <scope>-<key>/                           the checkpoint (policy.py describes it; the scope is
                                             "all" for one planner over every scenario, else the scenario)
    latest.json                              scope -> newest checkpoint folder
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agents.chainrec.offline.fusion_fit import FIT_VERSION, learn_fusion
from agents.chainrec.offline.planner_eval import compare_planners
from agents.chainrec.offline.policy_store import write_checkpoint
from agents.chainrec.offline.policy_train import TrainConfig, split_rows, train_policy
from agents.chainrec.offline.rollout import with_cost
from agents.chainrec.offline.row_library import rows_of
from agents.chainrec.offline.training_env import training_environment
from agents.chainrec.offline.training_tasks import TrajectoryConfig
from agents.chainrec.offline.trajectories import TrajectoryRun, existing_run, generate, read_rows
from agents.chainrec.online.learned_catalog import catalog_root
from agents.chainrec.online.planning import Planner
from agents.chainrec.online.policy import FORMAT_VERSION, RUN_SCOPE, ActionSpace, checkpoint_root, mark_latest
from world.environment import get_environment

Progress = Callable[[str, int, int], None]
TRAJECTORY_VERSION = 1
"""Bumped when the trajectory row layout changes (the checkpoint format has its own version)."""
MIN_TRAIN_TASKS = 50
"""In the per-scenario ablation (`chainrec_planner_scope="scenario"`), a scenario with fewer training
tasks than this (cold_item keeps a dozen users of ml-100k) also trains on the classic scenario's
tasks. Only the ablation's "scenario" state tells them apart (its scenario flag); the memory state
(Eq. 2) sees the same M_t whichever scenario a task came from. A planner over every scenario
(`RUN_SCOPE`) is never supplemented. Keyed into every checkpoint."""
SUPPLEMENT = "classic"
"""The scenario whose tasks supplement a small one."""
FUSION_PHASE = "fusion fit"
"""The progress phase of `fused_rows` (between the trajectories and SFT)."""
HELD_OUT_PHASE = "held-out planners"
"""The progress phase of the held-out planner comparison (after DPO)."""


def supplemented(
    rows: list[dict[str, Any]], scenario: str, classic: Callable[[], TrajectoryRun] | None
) -> list[dict[str, Any]]:
    """`rows` plus, when they are fewer than `MIN_TRAIN_TASKS` and not classic's, the classic
    scenario's rows (`classic` makes or finds them) with their user ids prefixed "classic:"."""
    if classic is None or scenario in (SUPPLEMENT, RUN_SCOPE) or len(rows) >= MIN_TRAIN_TASKS:
        return rows
    extra = read_rows(classic().path)
    return rows + [{**row, "user_id": f"{SUPPLEMENT}:{row['user_id']}"} for row in extra]


def digest(payload: dict[str, Any]) -> str:
    """A short stable digest of a JSON-ready dict."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:10]


def trajectory_folder(root: Path, config: TrajectoryConfig) -> Path:
    """Where `config`'s trajectories live under `root`."""
    return root / f"trajectories-{digest({'v': TRAJECTORY_VERSION, **config.as_dict()})}"


def checkpoint_folder(
    root: Path, config: TrajectoryConfig, train: TrainConfig, sft_only: bool, space: ActionSpace | None = None
) -> Path:
    """Where the checkpoint trained on `config`'s trajectories with `train` over `space`'s actions
    (default ChainRec's catalog, which leaves the key as it was) lives under `root`."""
    payload = {
        "v": FORMAT_VERSION,
        "trajectories": config.as_dict(),
        "train": train.as_dict(),
        "sft_only": sft_only,
        "supplement_below": MIN_TRAIN_TASKS,
        "fusion_fit": FIT_VERSION,
    }
    if space is not None and space != ActionSpace.default():
        payload["actions"] = list(space.actions)
    key = digest(payload)
    return root / f"{config.scenario}-{key}"


def library_root(dataset: str, ctx: Any) -> Path:
    """Where a run's trajectories and checkpoints live: ChainRec's cache folder for the shipped library,
    the catalog's own folder (learned_catalog.catalog_root) for another library file's."""
    rows = rows_of(ctx)
    return checkpoint_root(dataset) if rows.default else catalog_root(dataset, rows.catalog)


def make_trajectories(
    config: TrajectoryConfig, ctx: Any, root: Path | None = None, on_progress: Progress | None = None
) -> TrajectoryRun:
    """Generate (or complete) `config`'s trajectories under `root`, over the library `ctx` names."""
    env = get_environment(config.dataset)
    folder = trajectory_folder(root or library_root(config.dataset, ctx), config)
    hook = (lambda done, total: on_progress("trajectories", done, total)) if on_progress else None
    return generate(env, ctx, config, folder, hook, rows_of(ctx))


@dataclass(frozen=True)
class HeldOut:
    """How another catalog's checkpoint is evaluated and what it records (ChainRec's: the defaults)."""

    rule: Planner | None = None
    """The catalog's rule planner (None: ChainRec's over its catalog, no rule row over another)."""
    fixed_steps: int | None = None
    """Tools of the `fixed` row (None: `max_steps`)."""
    notes: dict[str, Any] = field(default_factory=dict)
    """Fields added to config.json and evaluation.json (e.g. `masked_tools`)."""


@dataclass
class Trained:
    """What `ensure_checkpoint` did."""

    folder: Path
    """The checkpoint."""
    reused: bool
    """True when it existed already (nothing trained)."""
    trajectories: TrajectoryRun
    """The trajectory file it was trained on."""
    evaluation: dict[str, Any]
    """evaluation.json: the held-out planner comparison."""
    data: dict[str, Any]
    """Counts: tasks, decisions, pairs."""


def fused_rows(
    rows: list[dict[str, Any]], config: TrajectoryConfig, train: TrainConfig, ctx: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rows, the fusion record): the rows re-fused with weights learned on the training split
    (fusion_fit.py, `train.fusion`), or as they are (mode "context", rows an LLM ranked, or a fit that
    did not beat the context's weights). The fit is kept in this process (`FUSED`, by `fusion_key`),
    so a planner trained on the same rows (router_learned_scenario after router_learned) reuses it."""
    if config.llm != "heuristic" or ctx is None:
        return rows, {"mode": train.fusion, "used": "context", "why": "CandidateRank was not the fusion"}
    key = fusion_key(rows, config, train, ctx)
    if key not in FUSED:
        env = training_environment(get_environment(config.dataset))
        fitted, _ = split_rows(rows, train.heldout_fraction, train.seed)
        keep_z = train.fusion_keep_z
        made = learn_fusion(rows, fitted, env, ctx, train.fusion, config.lam, config.cost_lam, keep_z)
        while len(FUSED) >= FUSED_KEPT:
            FUSED.pop(next(iter(FUSED)))
        FUSED[key] = made
    kept_rows, record = FUSED[key]
    return list(kept_rows), dict(record)  # training and the held-out table only read the rows


FUSED: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {}
"""`fused_rows`' results in this process, by `fusion_key`."""
FUSED_KEPT = 4
"""How many `FUSED` keeps (the oldest goes first)."""
PLANNER_ONLY = ("chainrec_planner_state", "chainrec_dpo_beta")
"""Context knobs the fusion fit never reads (only the planner's training does): left out of its key,
so router_learned_scenario (planner state "scenario") shares router_learned's fit."""


def fusion_key(rows: list[dict[str, Any]], config: TrajectoryConfig, train: TrainConfig, ctx: Any) -> str:
    """What fixes `fused_rows`' result: the rows themselves, the trajectory config, the training
    config's split and fusion fields, and the context's knobs but `PLANNER_ONLY`."""
    knobs = {k: v for k, v in vars(ctx).items() if k not in PLANNER_ONLY}
    fields = ("heldout_fraction", "seed", "fusion", "fusion_keep_z")
    payload = {
        "rows": rows,
        "config": config.as_dict(),
        "train": {name: getattr(train, name) for name in fields},
        "context": [type(ctx).__qualname__, knobs],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=repr).encode()).hexdigest()


def train_checkpoint(
    run: TrajectoryRun,
    config: TrajectoryConfig,
    train: TrainConfig,
    folder: Path,
    sft_only: bool = False,
    on_progress: Progress | None = None,
    space: ActionSpace | None = None,
    held_out: HeldOut | None = None,
    classic: Callable[[], TrajectoryRun] | None = None,
    ctx: Any = None,
) -> Trained:
    """Train on `run`'s rows over `space`'s actions (default ChainRec's catalog), compare planners
    on the held-out tasks (`held_out`: another catalog's rule planner, fixed-chain length and notes
    recorded in config.json and evaluation.json), write the checkpoint. The rows are scored with
    `config.cost_lam` whatever weight they were generated with (`rollout.with_cost`); a scenario
    with too few tasks adds the classic scenario's (`supplemented`, `classic` makes them); with
    `ctx` (the knobs the rows were made with) the fusion weights are learned first (`fused_rows`)."""
    space = space or ActionSpace.default()
    held_out = held_out or HeldOut()
    own = read_rows(run.path)
    rows = with_cost(supplemented(own, config.scenario, classic), config.lam, config.cost_lam)
    phase = on_progress or (lambda label, done, total: None)
    phase(FUSION_PHASE, 0, 1)
    rows, fusion = fused_rows(rows, config, train, ctx)
    phase(FUSION_PHASE, 1, 1)
    result = train_policy(rows, config.max_steps, config.lam, train, sft_only, on_progress, space)
    weights = {"sft": result.sft, **({"learned": result.dpo} if result.dpo is not None else {})}
    split = result.split
    phase(HELD_OUT_PHASE, 0, 1)
    evaluation = compare_planners(
        rows, split["train"], split["heldout"], weights, config.max_steps, config.lam, space,
        held_out.rule, held_out.fixed_steps, train.state,
    )  # fmt: skip
    phase(HELD_OUT_PHASE, 1, 1)
    evaluation["curves_last"] = {stage: points[-1] for stage, points in result.curves.items() if points}
    if len(rows) > len(own):
        evaluation["supplemented"] = {
            "scenario": SUPPLEMENT,
            "tasks": len(rows) - len(own),
            "own_tasks": len(own),
        }
    evaluation.update(held_out.notes)
    evaluation["fusion"] = fusion
    write_checkpoint(
        folder, config.as_dict(), train.as_dict(), result, evaluation, str(run.path), space,
        {**held_out.notes, "fusion": fusion},
    )  # fmt: skip
    mark_latest(folder.parent, config.scenario, folder, train.state)
    return Trained(folder, False, run, evaluation, result.data)


def ensure_checkpoint(
    config: TrajectoryConfig,
    train: TrainConfig,
    ctx: Any,
    root: Path | None = None,
    sft_only: bool = False,
    on_progress: Progress | None = None,
    space: ActionSpace | None = None,
) -> Trained:
    """The checkpoint for (config, train, space): reused when complete, else trajectories then
    training. The trajectories are made with the library file `ctx` names (its catalog is the action
    space unless `space` says otherwise); another family's rows come from its own generator
    (`train_checkpoint` on a `TrajectoryRun`)."""
    rows = rows_of(ctx)
    space = space or (None if rows.default else ActionSpace(rows.catalog))
    base = root or library_root(config.dataset, ctx)
    folder = checkpoint_folder(base, config, train, sft_only, space)
    if (folder / "config.json").is_file():  # trained on a complete file: read it, build no world
        run = existing_run(trajectory_folder(base, config), config)
        mark_latest(base, config.scenario, folder, train.state)
        saved = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        evaluation = json.loads((folder / "evaluation.json").read_text(encoding="utf-8"))
        return Trained(folder, True, run, evaluation, saved.get("data", {}))
    run = make_trajectories(config, ctx, base, on_progress)
    classic = replace(config, scenario=SUPPLEMENT)
    return train_checkpoint(
        run, config, train, folder, sft_only, on_progress, space,
        classic=lambda: make_trajectories(classic, ctx, base, on_progress), ctx=ctx,
    )  # fmt: skip
