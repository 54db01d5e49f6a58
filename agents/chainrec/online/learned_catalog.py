"""The learned planner over a catalog other than ChainRec's (the router's): it plans only with a
checkpoint trained over that catalog (its config.json's `actions` are the catalog's), and refuses in
one line otherwise, never planning with a checkpoint of another library behind its name."""

from __future__ import annotations

from agents.chainrec.online.catalog import Catalog
from agents.chainrec.online.learned_planner import LearnedPlanner, MissingCheckpoint
from agents.chainrec.online.policy import ACTIONS, Checkpoint
from state.chainrec.context import ChainRecContext


class CatalogLearnedPlanner(LearnedPlanner):
    """`LearnedPlanner` whose checkpoint must have been trained over `catalog`."""

    def __init__(self, ctx: ChainRecContext, catalog: Catalog) -> None:
        """`ctx`: dataset, checkpoint, stage and step budget; `catalog`: the actions it plans over."""
        super().__init__(ctx)
        self.catalog = catalog

    def checkpoint(self, scenario: str) -> Checkpoint:
        """The checkpoint this decision uses; `MissingCheckpoint` when there is none over the catalog."""
        found = super().checkpoint(scenario)
        actions = tuple(found.config.get("actions", ACTIONS))
        if actions != tuple(spec.name for spec in self.catalog):
            raise MissingCheckpoint(
                f"the learned planner checkpoint for {self.ctx.dataset} ({scenario}) plans over "
                f"{len(actions)} actions, not this catalog's {len(self.catalog)}: train one over the "
                "router's catalog, or set chainrec_checkpoint to one"
            )
        return found
