"""The learned planner over a catalog other than the shipped library's (a mined library file's, or one
with an extension's tools): it plans only with a
checkpoint trained over that catalog (its config.json's `actions` are the catalog's), and refuses in
one line otherwise, never planning with a checkpoint of another library behind its name.

Such checkpoints live apart from ChainRec's (`catalog_root`: one folder per catalog in the dataset's
cache, with its own `latest.json`), so the two never collide; a bench run names its checkpoint in
`chainrec_checkpoint`, Studio finds the newest of the catalog's folder. A tool the checkpoint's
trajectories masked (config.json `masked_tools`: e.g. a tool that cannot run in the training world)
was never learned, so the planner never picks it (`LearnedPlanner.decide`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from agents.chainrec.online.catalog import Catalog
from agents.chainrec.online.learned_planner import LearnedPlanner, MissingCheckpoint, checked_state
from agents.chainrec.online.policy import (
    ACTIONS,
    Checkpoint,
    checkpoint_root,
    find_checkpoint,
    latest_key,
    load_checkpoint,
    planner_dataset,
    planner_key,
    read_latest,
    usable,
)
from state.chainrec.context import ChainRecContext

_roots: dict[tuple[str, str, str], Path] = {}
"""(dataset, scenario and state, catalog) -> the checkpoint found."""


def catalog_root(dataset_spec: str, catalog: Catalog) -> Path:
    """Where checkpoints over `catalog` live: beside ChainRec's, named by the catalog's size and a
    digest of its actions."""
    actions = [spec.name for spec in catalog]
    key = hashlib.sha256("\x1e".join(actions).encode()).hexdigest()[:8]
    return checkpoint_root(dataset_spec).parent / f"catalog_planner-{len(actions)}-{key}"


def find_catalog_checkpoint(
    dataset_spec: str, scenario: str, catalog: Catalog, state: str = "memory"
) -> Path | None:
    """The newest checkpoint over `catalog` for the dataset and scenario trained on `state` (None:
    none trained; a found one is remembered for the process)."""
    key = (dataset_spec, f"{scenario}\x1f{state}", "\x1e".join(spec.name for spec in catalog))
    if key not in _roots:
        root = catalog_root(dataset_spec, catalog)
        name = read_latest(root).get(latest_key(scenario, state)) if root.is_dir() else None
        if not name or not usable(root / name, state):
            return None
        _roots[key] = root / name
    return _roots[key]


class CatalogLearnedPlanner(LearnedPlanner):
    """`LearnedPlanner` whose checkpoint must have been trained over `catalog`."""

    def __init__(self, ctx: ChainRecContext, catalog: Catalog) -> None:
        """`ctx`: dataset, checkpoint, stage and step budget; `catalog`: the actions it plans over."""
        super().__init__(ctx)
        self.catalog = catalog

    def checkpoint(self, scenario: str) -> Checkpoint:
        """The checkpoint this decision uses (`chainrec_checkpoint`, else the catalog's newest);
        `MissingCheckpoint` when there is none over the catalog."""
        state = self.ctx.chainrec_planner_state
        if self.ctx.chainrec_checkpoint:
            folder = find_checkpoint(self.ctx.dataset, scenario, self.ctx.chainrec_checkpoint, state)
            if folder is None:
                raise MissingCheckpoint.of(self.ctx, scenario)
        else:
            scope = self.ctx.chainrec_planner_scope
            found_in = planner_dataset(self.ctx.dataset, scope)
            folder = find_catalog_checkpoint(found_in, planner_key(scenario, scope), self.catalog, state)
        if folder is None:
            dataset, scope = self.ctx.dataset, self.ctx.chainrec_planner_scope
            key = planner_key(scenario, scope)
            train = (
                f"recgraph chainrec train --library router --dataset {dataset} --scope {scope} "
                f"--scenario {scenario}"
            )
            if state != "memory":
                train += f" --state {state}"
            raise MissingCheckpoint(
                f"no learned planner checkpoint for {dataset} ({key}): train one with `{train}` "
                f"(over the router's {len(self.catalog)}-action catalog; `recgraph bench --methods "
                "router_learned` trains one too), or set chainrec_checkpoint"
            )
        found = checked_state(load_checkpoint(folder, self.ctx.chainrec_policy_stage), state)
        actions = tuple(found.config.get("actions", ACTIONS))
        if actions != tuple(spec.name for spec in self.catalog):
            raise MissingCheckpoint(
                f"the learned planner checkpoint for {self.ctx.dataset} ({scenario}) plans over "
                f"{len(actions)} actions, not this catalog's {len(self.catalog)}: train one over this "
                "catalog, or set chainrec_checkpoint to one"
            )
        return found
